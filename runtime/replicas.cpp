#include "runtime/replicas.h"

#include <omp.h>

#include <algorithm>
#include <exception>
#include <memory>

#include "runtime/communicator.h"
#include "runtime/device.h"
#include "runtime/device_threads.h"
#include "runtime/processes.h"
#include "runtime/thread_barrier.h"

namespace graft::runtime {
namespace {

// Virtual CPU devices share the machine's cores evenly: each replica runs
// its OpenMP regions on its share, so replicas do not oversubscribe.
int threads_per_device() { return std::max(1, omp_get_num_procs() / static_cast<int>(devices().size())); }

// The error to report: the first replica's own failure, not the
// CollectiveAborted its failure caused in the others.
void rethrow_first(const std::vector<std::exception_ptr>& errors) {
  std::exception_ptr aborted;
  for (const std::exception_ptr& e : errors) {
    if (!e) continue;
    try {
      std::rethrow_exception(e);
    } catch (const CollectiveAborted&) {
      if (!aborted) aborted = e;
    } catch (...) {
      throw;
    }
  }
  if (aborted) std::rethrow_exception(aborted);
}

}  // namespace

void run_replicas(const std::vector<Device*>& targets, int first_rank, const std::string& axis_name,
                  const std::function<void(size_t r)>& replica) {
  const Processes& procs = processes();
  const size_t n = targets.size();
  std::unique_ptr<Communicator> communicator = make_communicator(static_cast<int>(n));
  std::vector<std::exception_ptr> errors(n);
  const int threads = threads_per_device();
  auto run = [&](size_t r) {
    const int rank = first_rank + static_cast<int>(r);
    try {
      DeviceScope on_device(*targets[r]);
      const Replica self{communicator.get(), rank, axis_name};
      ReplicaScope bound(self);
      replica(r);
    } catch (const CollectiveMismatch&) {
      errors[r] = std::current_exception();  // every replica of every process throws it alike
    } catch (const CollectiveAborted&) {
      errors[r] = std::current_exception();  // caused by another replica's failure, reported there
    } catch (const std::exception& e) {
      const std::string who = "replica " + std::to_string(rank) + " on " + targets[r]->name();
      // The other processes would wait for this replica forever: end them all.
      if (procs.count > 1)
        abort_processes("process " + std::to_string(procs.index) + " of " + std::to_string(procs.count) +
                        ": pmap " + who + " failed: " + e.what());
      errors[r] = std::current_exception();
      communicator->abort(who + " failed");
    } catch (...) {
      errors[r] = std::current_exception();
      communicator->abort("replica " + std::to_string(rank) + " failed");
    }
  };
  // Replica 0 runs on the caller's thread, the others on their devices'
  // worker threads, each under the same share of the cores.
  std::vector<Device*> worker_devices(targets.begin() + 1, targets.end());
  std::vector<std::function<void()>> others;
  for (size_t r = 1; r < n; ++r)
    others.emplace_back([&, r] {
      omp_set_num_threads(threads);
      run(r);
    });
  const int caller_threads = omp_get_max_threads();
  run_on_device_threads(worker_devices, others, [&] {
    omp_set_num_threads(threads);
    run(0);
    omp_set_num_threads(caller_threads);
  });
  rethrow_first(errors);
}

}  // namespace graft::runtime
