#include "runtime/buffer.h"

#include <cstdlib>
#include <string>

#include "graft/errors.h"
#include "runtime/caching_allocator.h"
#include "runtime/platform_allocator.h"

namespace graft::runtime {

Allocator& platform_allocator() {
  // Never destroyed: buffers may be freed during static destruction.
  static PlatformAllocator* allocator = new PlatformAllocator();
  return *allocator;
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
