// Buffers: device memory holding one array's elements. The runtime knows
// bytes, alignment and who made a buffer, never what the bytes mean.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "runtime/allocator_stats.h"

namespace graft::runtime {

inline constexpr size_t kBufferAlignment = 64;  // a cache line; enough for any SIMD load

// Where memory comes from: BfcAllocator (runtime/bfc_allocator.h),
// PlatformAllocator (runtime/platform_allocator.h), CachingAllocator.
class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual void* allocate(size_t nbytes) = 0;  // kBufferAlignment-aligned; throws OutOfMemoryError
  // `nbytes` is the size passed to allocate for this pointer.
  virtual void deallocate(void* ptr, size_t nbytes) = 0;
  // Exact statistics (see AllocatorStats); an allocator that keeps none reports zeros.
  virtual AllocatorStats stats() const { return {}; }
  // Peak values restart from the current ones.
  virtual void reset_peak() {}
  // A short name for messages and profiles ("bfc", "platform", ...).
  virtual const char* name() const { return "allocator"; }
};

// Exact allocation from the system, on demand, without a limit (a
// PlatformAllocator shared by the process; never destroyed).
Allocator& platform_allocator();
Allocator& default_allocator();

class Buffer {
 public:
  Buffer(size_t nbytes, Allocator& allocator = default_allocator());
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() { return data_; }
  const void* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  void* data_;
  size_t size_;
  Allocator& allocator_;
};
using BufferPtr = std::shared_ptr<Buffer>;

inline BufferPtr make_buffer(size_t nbytes) { return std::make_shared<Buffer>(nbytes); }

}  // namespace graft::runtime
