// Communicators: how the replicas of a pmap exchange bytes for collectives.
//
// The interface moves bytes only: the interpreter's collective kernels build
// psum, pmax, all_gather, ... from all_gather and permute, so a communicator
// needs no op semantics. ThreadCommunicator connects the threads of one
// process (one per virtual CPU device); ProcessCommunicator
// (runtime/process_communicator.h) spans the threads of several processes
// over MPI, and nothing above runtime/ changes. Ranks are global replica
// indices, process-major.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "graft/errors.h"
#include "runtime/thread_barrier.h"

namespace graft::runtime {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int size() const = 0;

  // Every rank sends `bytes` bytes; `out` (size() * bytes) receives all of
  // them in rank order. `what` describes the caller's collective ("psum
  // f32[3] over axis 'i'"); ranks whose `what` or size differ all get a
  // CollectiveMismatch naming both.
  virtual void all_gather(int rank, const void* in, void* out, size_t bytes, const std::string& what) = 0;

  // For each (source, destination) pair, destination receives source's
  // bytes. Returns whether this rank received anything (else `out` is untouched).
  virtual bool permute(int rank, const void* in, void* out, size_t bytes,
                       const std::vector<std::pair<int, int>>& pairs, const std::string& what) = 0;

  // A replica failed: every rank's current and later collective throws
  // CollectiveAborted instead of waiting for it (in this process; other
  // processes are ended by pmap, see abort_processes).
  virtual void abort(const std::string& why) = 0;
};

// Empty when every slot (each with `bytes` and `what`) holds the same
// collective on the same byte count; otherwise the message naming the first
// two that differ, slot k being replica first_rank + k.
template <class Slots>
std::string collective_mismatch(const Slots& slots, int first_rank) {
  for (size_t r = 1; r < slots.size(); ++r)
    if (slots[r].bytes != slots[0].bytes || *slots[r].what != *slots[0].what)
      return "collective mismatch across replicas: replica " + std::to_string(first_rank) + " runs " +
             *slots[0].what + " (" + std::to_string(slots[0].bytes) + " bytes), replica " +
             std::to_string(first_rank + static_cast<int>(r)) + " runs " + *slots[r].what + " (" +
             std::to_string(slots[r].bytes) + " bytes)";
  return {};
}

// The communicator of one pmap call: `local_size` replicas in this process,
// joined over MPI with the same number in every other process once
// distributed::initialize() has started several (runtime/processes.h).
std::unique_ptr<Communicator> make_communicator(int local_size);

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
  // Publishes this rank's slot and waits until every rank has.
  void publish(int rank, const Slot& slot);

  const int size_;
  ThreadBarrier barrier_;
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
