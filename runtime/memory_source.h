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
  // Grows what reserve() returned at `base` from `bytes` to `new_bytes` in
  // place (the same base), or returns false: a growing allocator then needs
  // no second region, which is where fragmentation comes from.
  virtual bool extend(void* /*base*/, size_t /*bytes*/, size_t /*new_bytes*/) { return false; }
};

// Anonymous private pages from mmap: the host's memory.
std::unique_ptr<MemorySource> host_pages();

}  // namespace graft::runtime
