#include "runtime/caching_allocator.h"

namespace graft::runtime {

size_t CachingAllocator::size_class(size_t nbytes) {
  // Small blocks round to the alignment, large ones to pages: equal shapes
  // always share a class, and rounding wastes at most a page.
  constexpr size_t kPage = 4096;
  size_t unit = nbytes >= kPage ? kPage : kBufferAlignment;
  size_t rounded = (nbytes + unit - 1) / unit * unit;
  return rounded ? rounded : kBufferAlignment;
}

CachingAllocator::~CachingAllocator() { release_cache(); }

void* CachingAllocator::allocate(size_t nbytes) {
  size_t cls = size_class(nbytes);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = free_.find(cls);
    if (it != free_.end() && !it->second.empty()) {
      void* p = it->second.back();
      it->second.pop_back();
      cached_ -= cls;
      return p;
    }
  }
  return base_.allocate(cls);
}

void CachingAllocator::deallocate(void* ptr, size_t nbytes) {
  size_t cls = size_class(nbytes);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (cached_ + cls <= max_cached_) {
      free_[cls].push_back(ptr);
      cached_ += cls;
      return;
    }
  }
  base_.deallocate(ptr, cls);
}

size_t CachingAllocator::cached_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cached_;
}

void CachingAllocator::release_cache() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [cls, blocks] : free_)
    for (void* p : blocks) base_.deallocate(p, cls);
  free_.clear();
  cached_ = 0;
}

}  // namespace graft::runtime
