#include "runtime/platform_allocator.h"

#include <algorithm>
#include <cstdlib>
#include <limits>

#include "graft/errors.h"

namespace graft::runtime {

size_t PlatformAllocator::rounded_size(size_t nbytes) {
  if (nbytes > std::numeric_limits<size_t>::max() - kBufferAlignment) return std::numeric_limits<size_t>::max();
  size_t rounded = (nbytes + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
  return rounded ? rounded : kBufferAlignment;
}

PlatformAllocator::PlatformAllocator(size_t limit, bool /*preallocate*/) : limit_(limit) {
  stats_.bytes_limit = static_cast<int64_t>(std::min<size_t>(limit, std::numeric_limits<int64_t>::max()));
}

void* PlatformAllocator::allocate(size_t nbytes) {
  size_t rounded = rounded_size(nbytes);
  bool over_limit;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    over_limit = rounded == std::numeric_limits<size_t>::max() ||
                 (limit_ != 0 && rounded > limit_ - std::min(limit_, static_cast<size_t>(stats_.bytes_in_use)));
    // Counted before the system call so that concurrent requests cannot
    // overshoot the limit together; undone below if the system refuses.
    if (!over_limit) {
      stats_.bytes_in_use += static_cast<int64_t>(rounded);
      stats_.bytes_reserved = stats_.bytes_in_use;
    }
  }
  void* p = over_limit ? nullptr : std::aligned_alloc(kBufferAlignment, rounded);
  std::lock_guard<std::mutex> lock(mutex_);
  if (!p) {
    if (!over_limit) {
      stats_.bytes_in_use -= static_cast<int64_t>(rounded);
      stats_.bytes_reserved = stats_.bytes_in_use;
    }
    throw OutOfMemoryError(out_of_memory_message(
        "platform", nbytes, stats_, over_limit ? "The request would pass the limit." : "The system refused it."));
  }
  stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
  stats_.peak_bytes_reserved = std::max(stats_.peak_bytes_reserved, stats_.bytes_reserved);
  stats_.num_allocs += 1;
  stats_.largest_alloc_size = std::max(stats_.largest_alloc_size, static_cast<int64_t>(nbytes));
  return p;
}

void PlatformAllocator::deallocate(void* ptr, size_t nbytes) {
  if (!ptr) return;
  std::free(ptr);
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.bytes_in_use -= static_cast<int64_t>(rounded_size(nbytes));
  stats_.bytes_reserved = stats_.bytes_in_use;
}

AllocatorStats PlatformAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void PlatformAllocator::reset_peak() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.peak_bytes_in_use = stats_.bytes_in_use;
  stats_.peak_bytes_reserved = stats_.bytes_reserved;
}

}  // namespace graft::runtime
