// The platform allocator: every request goes to the system (aligned_alloc)
// and every free straight back, so sanitizers see each block, and memory not
// in use is never held. Statistics are kept like BfcAllocator's, with
// bytes_reserved == bytes_in_use (it holds nothing else) and
// largest_free_block_bytes == 0.
#pragma once

#include <cstddef>
#include <mutex>

#include "runtime/allocator_stats.h"
#include "runtime/buffer.h"

namespace graft::runtime {

class PlatformAllocator final : public Allocator {
 public:
  // `limit` bounds bytes_in_use (0: no limit; requests past it throw
  // OutOfMemoryError). `preallocate` is accepted so that a device can build
  // either allocator from the same settings; the platform allocator always
  // allocates on demand and ignores it.
  explicit PlatformAllocator(size_t limit = 0, bool preallocate = false);

  void* allocate(size_t nbytes) override;
  // `nbytes` must be the size given to allocate: the statistics use it.
  void deallocate(void* ptr, size_t nbytes) override;
  AllocatorStats stats() const override;
  void reset_peak() override;
  const char* name() const override { return "platform"; }

  // What a request counts for in bytes_in_use: rounded up to a multiple of
  // kBufferAlignment, at least kBufferAlignment (a zero-size array still gets
  // a distinct block). The same rule as BfcAllocator::chunk_size.
  static size_t rounded_size(size_t nbytes);

 private:
  size_t limit_;
  mutable std::mutex mutex_;
  AllocatorStats stats_;
};

}  // namespace graft::runtime
