#include "runtime/buffer.h"

#include "runtime/device.h"

namespace graft::runtime {

Buffer::Buffer(size_t nbytes) : Buffer(nbytes, current_device()) {}

Buffer::Buffer(size_t nbytes, Device& device)
    : data_(device.allocate(nbytes)), size_(nbytes), device_(device), site_(current_site()) {
  device_.track(this);
}

Buffer::~Buffer() {
  device_.untrack(this);
  device_.allocator().deallocate(data_, size_);
}

}  // namespace graft::runtime
