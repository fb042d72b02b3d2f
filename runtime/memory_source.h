// Where an allocator's large regions come from: the host's pages (mmap), or
// the memory of a device the CPU cannot address (a CUDA device's cuMemAlloc,
// codegen/cuda/device_memory.h). The BFC allocator carves buffers out of
// them either way.
#pragma once

#include <cstddef>
#include <memory>

namespace graft::runtime {

class MemorySource {
 public:
  virtual ~MemorySource() = default;
  // `bytes` of memory aligned to at least 64 bytes, or nullptr when refused.
  virtual void* reserve(size_t bytes) = 0;
  // Gives back what reserve(bytes) returned.
  virtual void release(void* base, size_t bytes) = 0;
  // Whether the CPU may touch the bytes (then AddressSanitizer poisons the
  // free ones; device memory is never touched from the host).
  virtual bool host_addressable() const = 0;
};

// Anonymous private pages from mmap: the host's memory.
std::unique_ptr<MemorySource> host_pages();

}  // namespace graft::runtime
