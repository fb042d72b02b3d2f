// One long-lived worker thread per device, for pmap's replicas: starting a
// thread per replica per call cost ~20 us, a wake-up on a queue a few.
#pragma once

#include <functional>
#include <vector>

namespace graft::runtime {

class Device;

// Runs tasks[i] on the worker thread of devices[i], and `here` on the
// calling thread meanwhile; returns when all have finished. Tasks must not
// throw (pmap's catch their errors). Launches are
// queued atomically across workers, so two concurrent launches reach every
// worker in the same order and replicas of one launch never wait behind a
// later launch's (which could be waiting for them in a collective).
void run_on_device_threads(const std::vector<Device*>& devices, const std::vector<std::function<void()>>& tasks,
                           const std::function<void()>& here);

}  // namespace graft::runtime
