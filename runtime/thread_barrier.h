// A reusable barrier for the threads of one process that a failure can break:
// once abort() is called, every waiting and later arrival throws
// CollectiveAborted instead of waiting for a thread that will never come.
// pmap's replicas meet at it inside every collective.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>

#include "graft/errors.h"

namespace graft::runtime {

// Thrown by a collective when another replica failed and aborted the group;
// pmap reports the failing replica's own error instead.
class CollectiveAborted : public Error {
 public:
  using Error::Error;
};

// Thrown, on every replica alike, when the replicas run different collectives
// or the same one on different sizes. Every replica sees the same mismatch,
// so none is left waiting and pmap can report it without aborting processes.
class CollectiveMismatch : public ShapeError {
 public:
  using ShapeError::ShapeError;
};

// Thrown by the replica whose collective waited GRAFT_COLLECTIVE_TIMEOUT
// seconds for replicas that never came.
class CollectiveTimeout : public Error {
 public:
  using Error::Error;
};

class ThreadBarrier {
 public:
  explicit ThreadBarrier(int size);
  int size() const { return size_; }
  // Returns once `size` threads have arrived; throws CollectiveAborted once
  // aborted. After GRAFT_COLLECTIVE_TIMEOUT seconds without the others it
  // aborts the group and throws CollectiveTimeout naming `what`.
  void arrive_and_wait(const std::string& what);
  void abort(const std::string& why);
  bool aborted() const { return aborted_flag_.load(std::memory_order_relaxed); }
  // "collective aborted: <why>" once aborted.
  std::string abort_reason() const;

 private:
  const int size_;
  mutable std::mutex mutex_;
  std::condition_variable arrived_cv_;
  int arrived_ = 0;
  uint64_t generation_ = 0;
  std::atomic<uint64_t> released_{0};  // generation_, readable without the lock (polled before sleeping)
  std::atomic<bool> aborted_flag_{false};
  bool aborted_ = false;
  std::string abort_reason_;
};

}  // namespace graft::runtime
