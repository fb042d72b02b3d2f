#include "runtime/buffer.h"

#include <cstdlib>
#include <string>

#include "graft/errors.h"

namespace graft::runtime {
namespace {

class PlatformAllocator final : public Allocator {
 public:
  void* allocate(size_t nbytes) override {
    // aligned_alloc wants a multiple of the alignment; a zero-size array still gets a distinct block.
    size_t rounded = (nbytes + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
    if (rounded == 0) rounded = kBufferAlignment;
    void* p = std::aligned_alloc(kBufferAlignment, rounded);
    if (!p) throw OutOfMemoryError("platform allocator: cannot allocate " + std::to_string(nbytes) + " bytes");
    return p;
  }
  void deallocate(void* ptr, size_t) override { std::free(ptr); }
};

}  // namespace

Allocator& platform_allocator() {
  static PlatformAllocator allocator;
  return allocator;
}

Allocator& default_allocator() { return platform_allocator(); }

Buffer::Buffer(size_t nbytes, Allocator& allocator)
    : data_(allocator.allocate(nbytes)), size_(nbytes), allocator_(allocator) {}

Buffer::~Buffer() { allocator_.deallocate(data_, size_); }

}  // namespace graft::runtime
