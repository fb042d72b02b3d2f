#include "runtime/buffer.h"

#include <cstdlib>
#include <string>

#include "graft/errors.h"
#include "runtime/caching_allocator.h"

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

// GRAFT_ALLOCATOR=platform allocates exactly on demand (debugging, and what
// sanitizers need to see every free); anything else caches freed blocks.
Allocator& default_allocator() {
  static Allocator& chosen = []() -> Allocator& {
    const char* env = std::getenv("GRAFT_ALLOCATOR");
    bool platform = env && std::string(env) == "platform";
#if defined(__SANITIZE_ADDRESS__)
    platform = true;
#endif
    if (platform) return platform_allocator();
    // Never destroyed: buffers may be freed during static destruction.
    static CachingAllocator* caching = new CachingAllocator(platform_allocator(), size_t{1} << 30);
    return *caching;
  }();
  return chosen;
}

Buffer::Buffer(size_t nbytes, Allocator& allocator)
    : data_(allocator.allocate(nbytes)), size_(nbytes), allocator_(allocator) {}

Buffer::~Buffer() { allocator_.deallocate(data_, size_); }

}  // namespace graft::runtime
