// Communicators: how the replicas of a pmap exchange bytes for collectives.
//
// The interface moves bytes only: the interpreter's collective kernels build
// psum, pmax, all_gather, ... from all_gather and permute, so a communicator
// needs no op semantics. ThreadCommunicator connects the threads of one
// process (one per virtual CPU device); an MPI communicator (one rank per
// process) implements the same three calls with MPI_Allgather, MPI_Sendrecv
// and MPI_Abort, and nothing above runtime/ changes.
#pragma once

#include <atomic>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "graft/errors.h"

namespace graft::runtime {

// Thrown by a collective when another replica failed and aborted the group;
// pmap reports the failing replica's own error instead.
class CollectiveAborted : public Error {
 public:
  using Error::Error;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int size() const = 0;

  // Every rank sends `bytes` bytes; `out` (size() * bytes) receives all of
  // them in rank order. `what` describes the caller's collective ("psum
  // f32[3] over axis 'i'"); ranks whose `what` or size differ get a
  // ShapeError naming both.
  virtual void all_gather(int rank, const void* in, void* out, size_t bytes, const std::string& what) = 0;

  // For each (source, destination) pair, destination receives source's
  // bytes. Returns whether this rank received anything (else `out` is untouched).
  virtual bool permute(int rank, const void* in, void* out, size_t bytes,
                       const std::vector<std::pair<int, int>>& pairs, const std::string& what) = 0;

  // A replica failed: every rank's current and later collective throws
  // CollectiveAborted instead of waiting for it.
  virtual void abort(const std::string& why) = 0;
};

// The replicas are threads of this process; buffers are read in place.
class ThreadCommunicator final : public Communicator {
 public:
  explicit ThreadCommunicator(int size);
  int size() const override { return size_; }
  void all_gather(int rank, const void* in, void* out, size_t bytes, const std::string& what) override;
  bool permute(int rank, const void* in, void* out, size_t bytes, const std::vector<std::pair<int, int>>& pairs,
               const std::string& what) override;
  void abort(const std::string& why) override;

 private:
  struct Slot {
    const void* data = nullptr;
    size_t bytes = 0;
    const std::string* what = nullptr;
  };
  // Publishes this rank's slot and waits until every rank has; then checks
  // that all ranks run the same collective on the same sizes.
  void publish(int rank, const Slot& slot);
  void barrier();  // throws CollectiveAborted once aborted

  const int size_;
  std::mutex mutex_;
  std::condition_variable arrived_cv_;
  int arrived_ = 0;
  uint64_t generation_ = 0;
  std::atomic<uint64_t> released_{0};  // generation_, readable without the lock (polled before sleeping)
  std::atomic<bool> aborted_flag_{false};
  bool aborted_ = false;
  std::string abort_reason_;
  std::vector<Slot> slots_;
};

// The replica this thread runs: its communicator, its rank, and the axis
// name collectives must use. Bound by pmap around one replica's run.
struct Replica {
  Communicator* communicator = nullptr;
  int rank = 0;
  std::string axis_name;
};

// The replica bound on this thread, or nullptr outside pmap.
const Replica* current_replica();

class ReplicaScope {
 public:
  explicit ReplicaScope(const Replica& replica);
  ~ReplicaScope();
  ReplicaScope(const ReplicaScope&) = delete;
  ReplicaScope& operator=(const ReplicaScope&) = delete;

 private:
  const Replica* previous_;
};

}  // namespace graft::runtime
