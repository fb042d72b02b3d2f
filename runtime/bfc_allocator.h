// The BFC allocator ("best fit with coalescing", after TensorFlow/XLA's):
// memory comes from the system (a MemorySource: host pages or a GPU's
// memory) in large regions, either the whole limit at
// construction (preallocate) or on demand. A region is tiled by chunks, each
// either handed out or free; free chunks sit in bins by power-of-two size
// class, ordered by (size, address) inside a bin. A request takes the
// smallest free chunk that fits (best fit, lowest address among equals),
// splitting off the rest as a new free chunk; a freed chunk merges with free
// neighbours at once (coalescing), so no two free chunks are ever adjacent.
//
// Sizes: every request occupies chunk_size(n) = n rounded up to a multiple of
// kBufferAlignment (64), at least 64 bytes. A chunk always has exactly that
// size (the rest of a larger free chunk is always split off: with 64-byte
// granularity any remainder is a usable chunk), so bytes_in_use is the sum of
// chunk_size over live allocations, the same rule as PlatformAllocator's.
//
// Growth (preallocate == false): a new region has max(chunk_size(n), g)
// bytes where g starts at 2 MiB and doubles after each new region, never
// taking reserved memory past the limit. When the limit (or the system)
// refuses a region, regions that are entirely free are returned to the system
// first and the request retried. Free chunks are otherwise kept, not returned.
//
// Thread-safe: one mutex around every operation. Allocation and free are
// O(log n) in the free chunks of one bin; the chunk for a freed pointer is
// found in a hash table.
#pragma once

#include <cstddef>
#include <memory>

#include "runtime/allocator_stats.h"
#include "runtime/buffer.h"
#include "runtime/memory_source.h"

namespace graft::runtime {

class BfcAllocator final : public Allocator {
 public:
  static constexpr size_t kInitialGrowth = size_t{2} << 20;

  // `limit`: the most memory taken from the system, rounded down to a
  // multiple of 64 (must be at least 64 bytes). `preallocate`: take all of it
  // now as one region (throws OutOfMemoryError if the system refuses).
  // `source`: where regions come from (host_pages() when null).
  BfcAllocator(size_t limit, bool preallocate, std::unique_ptr<MemorySource> source = nullptr);
  ~BfcAllocator() override;  // returns every region; live allocations become invalid
  BfcAllocator(const BfcAllocator&) = delete;
  BfcAllocator& operator=(const BfcAllocator&) = delete;

  // Throws OutOfMemoryError naming the bytes requested, in use, reserved,
  // the limit and the largest free block.
  void* allocate(size_t nbytes) override;
  // Looks the chunk up by pointer (`nbytes` is not needed); throws
  // std::invalid_argument for a pointer this allocator did not hand out or
  // already took back.
  void deallocate(void* ptr, size_t nbytes) override;
  AllocatorStats stats() const override;
  void reset_peak() override;
  const char* name() const override { return "bfc"; }

  // The bytes a request of `nbytes` occupies.
  static size_t chunk_size(size_t nbytes);

  // Returns the regions that hold no live allocation to the system (grow
  // mode only; a preallocated region is kept). Returns the bytes released.
  size_t release_free_regions();
  size_t num_regions() const;

  // Walks every region and throws std::logic_error naming the first broken
  // invariant: chunks tile each region exactly, in address order and linked
  // both ways; no two adjacent chunks are free; every free chunk is in
  // exactly one bin, the one for its size, and the bins hold nothing else;
  // every live chunk is in the pointer table; the statistics match the walk.
  void check_invariants() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace graft::runtime
