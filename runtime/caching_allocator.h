// A caching allocator: freed blocks are kept by size and handed out again,
// so a loop of same-shaped eager ops (or a jitted step) stops paying the
// system allocator and first-touch page faults on every call. Bounded: past
// `max_cached` bytes, freed blocks go back to the system. The memory issue's
// BFC allocator (preallocated regions, best fit, coalescing) supersedes it.
#pragma once

#include <cstddef>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "runtime/buffer.h"

namespace graft::runtime {

class CachingAllocator final : public Allocator {
 public:
  CachingAllocator(Allocator& base, size_t max_cached) : base_(base), max_cached_(max_cached) {}
  ~CachingAllocator() override;

  void* allocate(size_t nbytes) override;
  void deallocate(void* ptr, size_t nbytes) override;
  const char* name() const override { return "caching"; }

  size_t cached_bytes() const;
  void release_cache();  // returns every cached block to the base allocator

 private:
  static size_t size_class(size_t nbytes);

  Allocator& base_;
  size_t max_cached_;
  mutable std::mutex mutex_;
  std::unordered_map<size_t, std::vector<void*>> free_;  // by size class
  size_t cached_ = 0;
};

}  // namespace graft::runtime
