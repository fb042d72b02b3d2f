// Buffers: device memory holding one array's elements. The runtime knows
// bytes, alignment and who made a buffer, never what the bytes mean.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "runtime/allocator_stats.h"

namespace graft::runtime {

inline constexpr size_t kBufferAlignment = 64;  // a cache line; enough for any SIMD load

// Where memory comes from: BfcAllocator (runtime/bfc_allocator.h) or
// PlatformAllocator (runtime/platform_allocator.h), one per device.
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

class Device;
struct AllocationSite;

// A block of one device's memory. It records the thread's current
// AllocationSite when made and stays on its device's list of live buffers
// until destroyed.
class Buffer {
 public:
  explicit Buffer(size_t nbytes);  // on current_device()
  Buffer(size_t nbytes, Device& device);
  // A view of `nbytes` at `offset` inside `arena` (a jit executable's
  // temporaries): it keeps the arena alive and owns nothing itself.
  Buffer(std::shared_ptr<Buffer> arena, size_t offset, size_t nbytes);
  // A view of memory someone else owns and frees (a host callback's operands
  // and results): never tracked, never freed here.
  struct Borrowed {};
  Buffer(Borrowed, void* data, size_t nbytes, Device& device);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() { return data_; }
  const void* data() const { return data_; }
  size_t size() const { return size_; }
  Device& device() const { return device_; }
  const AllocationSite* site() const { return site_; }

 private:
  friend class Device;
  void* data_;
  size_t size_;
  Device& device_;
  const AllocationSite* site_;
  std::shared_ptr<Buffer> arena_;  // set for a view
  bool borrowed_ = false;
  Buffer* prev_ = nullptr;  // the device's list of live buffers
  Buffer* next_ = nullptr;
};
using BufferPtr = std::shared_ptr<Buffer>;

inline BufferPtr make_buffer(size_t nbytes) { return std::make_shared<Buffer>(nbytes); }

}  // namespace graft::runtime
