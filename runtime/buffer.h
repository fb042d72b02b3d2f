// Buffers: device memory holding one array's elements. The runtime knows
// bytes, alignment and who made a buffer, never what the bytes mean.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace graft::runtime {

inline constexpr size_t kBufferAlignment = 64;  // a cache line; enough for any SIMD load

// Where memory comes from. The memory issue adds the BFC allocator, per-device
// instances, statistics and provenance behind this interface.
class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual void* allocate(size_t nbytes) = 0;  // kBufferAlignment-aligned; throws OutOfMemoryError
  virtual void deallocate(void* ptr, size_t nbytes) = 0;
};

// Exact allocation from the system, on demand.
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
