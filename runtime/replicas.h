// Running pmap's replicas: one per device, each on its device's worker
// thread (the first on the caller's), under a communicator that spans every
// replica of every process. Shared by eager pmap (api/pmap.cpp) and the pmap
// node of traced programs (interpreter/kernels/pmap.cpp).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace graft::runtime {

class Device;

// Runs replica(r) for every r < devices.size(), on devices[r] (its global
// rank first_rank + r), with the replica bound for collectives over
// axis_name and OpenMP limited to the device's share of the cores. A
// replica that throws aborts the others' collectives (with several
// processes, the whole job, naming it); the first replica's own error is
// rethrown once all have stopped.
void run_replicas(const std::vector<Device*>& devices, int first_rank, const std::string& axis_name,
                  const std::function<void(size_t r)>& replica);

}  // namespace graft::runtime
