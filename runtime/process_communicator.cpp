// The replicas of a pmap spread over processes: `local` replicas (threads)
// in each of `count` processes, global rank = process * local + i.
//
// Within a process the replicas meet at a ThreadBarrier; the first of them
// (the leader) then makes the process's MPI calls for all of them and the
// others wait at a second barrier. Every collective first exchanges a small
// signature (what it is and how many bytes) so that processes that disagree
// all get the same CollectiveMismatch naming both sides before any data
// moves; then the data moves with nonblocking MPI calls that are polled
// against GRAFT_COLLECTIVE_TIMEOUT, so a process that never arrives ends
// the run with the collective's name instead of hanging it.
#if GRAFT_HAVE_MPI

#include <chrono>
#include <climits>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "runtime/communicator.h"
#include "runtime/mpi_world.h"
#include "runtime/processes.h"

namespace graft::runtime {
namespace {

// What one process is about to run, exchanged before the data.
struct Signature {
  uint64_t bytes = 0;
  int32_t local_mismatch = 0;  // the text is this process's own mismatch
  char text[500] = {};
};

void set_text(Signature& s, const std::string& text) {
  std::strncpy(s.text, text.c_str(), sizeof s.text - 1);
  s.text[sizeof s.text - 1] = '\0';
}

class ProcessCommunicator final : public Communicator {
 public:
  explicit ProcessCommunicator(int local_size)
      : local_(local_size),
        process_(processes().index),
        count_(processes().count),
        barrier_(local_size),
        slots_(static_cast<size_t>(local_size)) {}

  int size() const override { return local_ * count_; }
  void abort(const std::string& why) override { barrier_.abort(why); }

  void all_gather(int rank, const void* in, void* out, size_t bytes, const std::string& what) override {
    run(rank, {in, out, bytes, &what, nullptr}, [this] { lead_all_gather(); });
  }

  bool permute(int rank, const void* in, void* out, size_t bytes, const std::vector<std::pair<int, int>>& pairs,
               const std::string& what) override {
    const int i = run(rank, {in, out, bytes, &what, &pairs}, [this] { lead_permute(); });
    return slots_[static_cast<size_t>(i)].received;
  }

 private:
  struct Slot {
    const void* in = nullptr;
    void* out = nullptr;
    size_t bytes = 0;
    const std::string* what = nullptr;
    const std::vector<std::pair<int, int>>* pairs = nullptr;
    bool received = false;
  };

  // Publishes this replica's slot; the leader runs `lead` for the process
  // between the two barriers. Returns the replica's local index.
  template <class Lead>
  int run(int rank, const Slot& slot, Lead lead) {
    const int i = rank - process_ * local_;
    if (i < 0 || i >= local_)
      throw Error("ProcessCommunicator: replica " + std::to_string(rank) + " is not one of process " +
                  std::to_string(process_) + "'s");
    slots_[static_cast<size_t>(i)] = slot;
    barrier_.arrive_and_wait(*slot.what);
    if (i == 0) {
      try {
        error_.clear();
        lead();
      } catch (const std::exception& e) {
        barrier_.abort(e.what());  // the others are at (or on their way to) the second barrier
        throw;
      }
    }
    barrier_.arrive_and_wait(*slot.what);
    if (!error_.empty()) throw CollectiveMismatch(error_);
    return i;
  }

  // Polls the requests until they complete; a collective that outlives
  // GRAFT_COLLECTIVE_TIMEOUT ends every process, naming it.
  void wait(std::vector<MPI_Request>& requests, const std::string& what) {
    if (requests.empty()) return;
    const auto start = std::chrono::steady_clock::now();
    const double timeout = collective_timeout_seconds();
    for (uint64_t polls = 0;; ++polls) {
      int done = 0;
      MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE);
      if (done) return;
      if (polls < 4096) continue;  // small collectives finish within microseconds
      if (barrier_.aborted()) throw CollectiveAborted(barrier_.abort_reason());
      const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (waited > timeout)
        abort_processes(what + " did not complete within " + std::to_string(timeout) +
                        " s (GRAFT_COLLECTIVE_TIMEOUT) on process " + std::to_string(process_) + " of " +
                        std::to_string(count_) + ": another process never reached it");
      if (waited > 0.01)
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      else
        std::this_thread::yield();
    }
  }

  // Sets error_ (the same text on every process) unless every replica of
  // every process runs the same collective on the same byte count.
  void agree() {
    const Slot& lead = slots_[0];
    Signature mine;
    mine.bytes = lead.bytes;
    set_text(mine, *lead.what);
    const std::string local_error = collective_mismatch(slots_, process_ * local_);
    if (!local_error.empty()) {
      mine.local_mismatch = 1;
      set_text(mine, local_error);
    }
    std::vector<Signature> all(static_cast<size_t>(count_));
    std::vector<MPI_Request> request(1);
    MPI_Iallgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, mpi_world(), request.data());
    wait(request, *lead.what);
    for (int p = 0; p < count_; ++p)
      if (all[static_cast<size_t>(p)].local_mismatch) {
        error_ = all[static_cast<size_t>(p)].text;
        return;
      }
    for (int p = 1; p < count_; ++p) {
      const Signature& a = all[0];
      const Signature& b = all[static_cast<size_t>(p)];
      if (a.bytes != b.bytes || std::strcmp(a.text, b.text) != 0) {
        error_ = "collective mismatch across processes: process 0 runs " + std::string(a.text) + " (" +
                 std::to_string(a.bytes) + " bytes), process " + std::to_string(p) + " runs " + b.text + " (" +
                 std::to_string(b.bytes) + " bytes)";
        return;
      }
    }
  }

  int mpi_count(size_t bytes, const std::string& what) const {
    if (bytes > static_cast<size_t>(INT_MAX))
      throw UnsupportedError(what + ": " + std::to_string(bytes) +
                             " bytes per process is more than one MPI message carries (2 GiB)");
    return static_cast<int>(bytes);
  }

  void lead_all_gather() {
    agree();
    if (!error_.empty()) return;
    const Slot& lead = slots_[0];
    const size_t bytes = lead.bytes;
    const size_t block = bytes * static_cast<size_t>(local_);
    if (block == 0) return;
    const int n = mpi_count(block, *lead.what);
    const void* send = lead.in;
    std::vector<char> staging;
    if (local_ > 1) {  // this process's replicas, side by side as they sit in the result
      staging.resize(block);
      for (int i = 0; i < local_; ++i)
        std::memcpy(staging.data() + static_cast<size_t>(i) * bytes, slots_[static_cast<size_t>(i)].in, bytes);
      send = staging.data();
    }
    std::vector<MPI_Request> request(1);
    MPI_Iallgather(send, n, MPI_BYTE, lead.out, n, MPI_BYTE, mpi_world(), request.data());
    wait(request, *lead.what);
    for (int i = 1; i < local_; ++i)
      std::memcpy(slots_[static_cast<size_t>(i)].out, lead.out, block * static_cast<size_t>(count_));
  }

  void lead_permute() {
    agree();
    if (!error_.empty()) return;
    const Slot& lead = slots_[0];
    const std::vector<std::pair<int, int>>& pairs = *lead.pairs;
    const int n = mpi_count(lead.bytes, *lead.what);
    for (Slot& s : slots_) s.received = false;
    std::vector<MPI_Request> requests;
    for (size_t k = 0; k < pairs.size(); ++k) {
      const auto [source, destination] = pairs[k];
      if (source < 0 || source >= size() || destination < 0 || destination >= size()) {
        error_ = *lead.what + ": pair (" + std::to_string(source) + ", " + std::to_string(destination) +
                 ") is outside a group of " + std::to_string(size());
        break;
      }
      const int sp = source / local_, dp = destination / local_;
      Slot& from = slots_[static_cast<size_t>(source % local_)];
      Slot& to = slots_[static_cast<size_t>(destination % local_)];
      const int tag = static_cast<int>(k % 32768);
      if (sp == process_ && dp == process_) {
        if (n > 0) std::memcpy(to.out, from.in, lead.bytes);
        to.received = true;
      } else if (sp == process_) {
        if (n > 0) MPI_Isend(from.in, n, MPI_BYTE, dp, tag, mpi_world(), &requests.emplace_back());
      } else if (dp == process_) {
        if (n > 0) MPI_Irecv(to.out, n, MPI_BYTE, sp, tag, mpi_world(), &requests.emplace_back());
        to.received = true;
      }
    }
    wait(requests, *lead.what);
  }

  const int local_, process_, count_;
  ThreadBarrier barrier_;
  std::vector<Slot> slots_;
  std::string error_;  // written by the leader between the barriers, read by all after the second
};

}  // namespace

std::unique_ptr<Communicator> make_process_communicator(int local_size) {
  if (processes().count <= 1) throw Error("make_process_communicator: distributed::initialize() started one process");
  return std::make_unique<ProcessCommunicator>(local_size);
}

}  // namespace graft::runtime

#endif  // GRAFT_HAVE_MPI
