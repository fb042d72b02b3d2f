#include "runtime/buffer.h"

#include "runtime/device.h"

namespace graft::runtime {

Buffer::Buffer(size_t nbytes) : Buffer(nbytes, current_device()) {}

Buffer::Buffer(size_t nbytes, Device& device)
    : data_(device.allocate(nbytes)), size_(nbytes), device_(device), site_(current_site()) {
  device_.track(this);
}

Buffer::Buffer(std::shared_ptr<Buffer> arena, size_t offset, size_t nbytes)
    : data_(static_cast<char*>(arena->data()) + offset),
      size_(nbytes),
      device_(arena->device()),
      site_(arena->site()),
      arena_(std::move(arena)) {}

Buffer::Buffer(Borrowed, void* data, size_t nbytes, Device& device)
    : data_(data), size_(nbytes), device_(device), site_(current_site()), borrowed_(true) {}

Buffer::~Buffer() {
  if (arena_ || borrowed_) return;  // a view: the arena's own buffer is tracked and freed
  device_.untrack(this);
  device_.allocator().deallocate(data_, size_);
}

}  // namespace graft::runtime
