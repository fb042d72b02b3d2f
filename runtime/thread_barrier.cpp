#include "runtime/thread_barrier.h"

#include <chrono>

#include "runtime/processes.h"
#include "runtime/spin_wait.h"

namespace graft::runtime {

ThreadBarrier::ThreadBarrier(int size) : size_(size) {
  if (size < 1) throw Error("a replica group needs at least one replica, got " + std::to_string(size));
}

void ThreadBarrier::arrive_and_wait(const std::string& what) {
  if (size_ == 1) {
    if (aborted()) throw CollectiveAborted(abort_reason());
    return;
  }
  std::unique_lock lock(mutex_);
  if (aborted_) throw CollectiveAborted(abort_reason_);
  const uint64_t generation = generation_;
  if (++arrived_ == size_) {
    arrived_ = 0;
    ++generation_;
    released_.store(generation_, std::memory_order_release);
    lock.unlock();
    arrived_cv_.notify_all();
    return;
  }
  // The other threads usually arrive within microseconds: poll before sleeping.
  lock.unlock();
  spin_until([&] { return released_.load(std::memory_order_acquire) != generation || aborted_flag_.load(); });
  lock.lock();
  const double timeout = collective_timeout_seconds();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout);
  if (!arrived_cv_.wait_until(lock, deadline, [&] { return generation_ != generation || aborted_; })) {
    --arrived_;
    const int missing = size_ - arrived_ - 1;  // arrived_ now counts the others waiting
    lock.unlock();
    const std::string message = what + " did not complete within " + std::to_string(timeout) +
                                " s (GRAFT_COLLECTIVE_TIMEOUT): " + std::to_string(missing) + " of " +
                                std::to_string(size_) + " replicas never reached it";
    abort(message);
    throw CollectiveTimeout(message);
  }
  if (generation_ == generation) throw CollectiveAborted(abort_reason_);
}

void ThreadBarrier::abort(const std::string& why) {
  std::lock_guard lock(mutex_);
  if (aborted_) return;
  aborted_ = true;
  abort_reason_ = "collective aborted: " + why;
  aborted_flag_ = true;
  arrived_cv_.notify_all();
}

std::string ThreadBarrier::abort_reason() const {
  std::lock_guard lock(mutex_);
  return abort_reason_;
}

}  // namespace graft::runtime
