// The caching allocator reuses freed blocks of a size class and respects its bound.
#include <catch2/catch.hpp>
#include <cstdint>
#include <map>

#include "runtime/caching_allocator.h"

using namespace graft::runtime;

namespace {
// Counts what reaches the system.
class CountingAllocator final : public Allocator {
 public:
  void* allocate(size_t n) override {
    ++allocs;
    live[n]++;
    return platform_allocator().allocate(n);
  }
  void deallocate(void* p, size_t n) override {
    ++frees;
    live[n]--;
    platform_allocator().deallocate(p, n);
  }
  int allocs = 0, frees = 0;
  std::map<size_t, int> live;
};
}  // namespace

TEST_CASE("caching allocator: reuse, alignment, bound, release", "[runtime][allocator]") {
  CountingAllocator base;
  {
    CachingAllocator cache(base, 1 << 20);
    void* a = cache.allocate(1000);
    CHECK(reinterpret_cast<uintptr_t>(a) % kBufferAlignment == 0);
    cache.deallocate(a, 1000);
    CHECK(cache.cached_bytes() == 1024);
    void* b = cache.allocate(1010);  // same size class (1024): the same block comes back
    CHECK(b == a);
    CHECK(base.allocs == 1);
    void* c = cache.allocate(5000);  // a page-rounded class: 8192
    cache.deallocate(b, 1010);
    cache.deallocate(c, 5000);
    CHECK(cache.cached_bytes() == 1024 + 8192);
    void* big = cache.allocate(2 << 20);  // larger than the bound: not kept when freed
    cache.deallocate(big, 2 << 20);
    CHECK(base.frees == 1);
    CHECK(cache.cached_bytes() == 1024 + 8192);
    cache.release_cache();
    CHECK(cache.cached_bytes() == 0);
    CHECK(base.frees == 3);
    void* zero = cache.allocate(0);  // a zero-size request still gets a distinct, aligned block
    CHECK(zero != nullptr);
    cache.deallocate(zero, 0);
  }
  // Destroying the cache returns everything.
  CHECK(base.allocs == base.frees);
}
