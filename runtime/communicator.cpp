#include "runtime/communicator.h"

#include <cstring>

#include "runtime/processes.h"

namespace graft::runtime {

ThreadCommunicator::ThreadCommunicator(int size) : size_(size), barrier_(size), slots_(static_cast<size_t>(size)) {}

void ThreadCommunicator::abort(const std::string& why) { barrier_.abort(why); }

void ThreadCommunicator::publish(int rank, const Slot& slot) {
  if (rank < 0 || rank >= size_)
    throw Error("ThreadCommunicator: rank " + std::to_string(rank) + " outside a group of " + std::to_string(size_));
  slots_[static_cast<size_t>(rank)] = slot;
  barrier_.arrive_and_wait(*slot.what);
}

// Two barriers per collective: after the first every rank's input is
// published; after the second every rank has finished reading the others'
// (inputs and descriptions), so each may return and reuse its buffers.
void ThreadCommunicator::all_gather(int rank, const void* in, void* out, size_t bytes, const std::string& what) {
  publish(rank, {in, bytes, &what});
  std::string error = collective_mismatch(slots_, 0);
  if (error.empty())
    for (size_t r = 0; r < slots_.size(); ++r)
      if (bytes > 0) std::memcpy(static_cast<char*>(out) + r * bytes, slots_[r].data, bytes);
  barrier_.arrive_and_wait(what);
  if (!error.empty()) throw CollectiveMismatch(error);
}

bool ThreadCommunicator::permute(int rank, const void* in, void* out, size_t bytes,
                                 const std::vector<std::pair<int, int>>& pairs, const std::string& what) {
  publish(rank, {in, bytes, &what});
  std::string error = collective_mismatch(slots_, 0);
  bool received = false;
  if (error.empty()) {
    for (auto [source, destination] : pairs) {
      if (destination != rank) continue;
      if (source < 0 || source >= size_) {
        error = what + ": source replica " + std::to_string(source) + " outside a group of " + std::to_string(size_);
        break;
      }
      if (bytes > 0) std::memcpy(out, slots_[static_cast<size_t>(source)].data, bytes);
      received = true;
    }
  }
  barrier_.arrive_and_wait(what);
  if (!error.empty()) throw CollectiveMismatch(error);
  return received;
}

std::unique_ptr<Communicator> make_communicator(int local_size) {
  if (processes().count > 1) return make_process_communicator(local_size);
  return std::make_unique<ThreadCommunicator>(local_size);
}

namespace {
thread_local const Replica* bound_replica = nullptr;
}

const Replica* current_replica() { return bound_replica; }

ReplicaScope::ReplicaScope(const Replica& replica) : previous_(bound_replica) { bound_replica = &replica; }
ReplicaScope::~ReplicaScope() { bound_replica = previous_; }

}  // namespace graft::runtime
