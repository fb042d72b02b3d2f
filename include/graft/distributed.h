// Several processes, one program: pmap across processes and hosts.
//
// Start the program with an MPI launcher (`mpirun -np 2 ./train`) and call
// distributed::initialize() first, before graft uses a device. Every process
// then sees every process's devices in devices() (ids process-major: process
// p's local device i is id p * local_devices().size() + i), and a pmap maps
// one replica to each device of every process: each process passes the
// slices for its own devices (the mapped axis has local_devices().size()
// entries, or fewer) and gets back its own shards, while axis_index and the
// collectives span every replica of every process.
//
// A replica that fails ends every process of the run within seconds with its
// message (MPI_Abort); processes that disagree on a collective all get a
// ShapeError naming both sides; a collective that waits longer than
// GRAFT_COLLECTIVE_TIMEOUT seconds (default 300) ends the run and names the
// collective. Only one pmap may run at a time in each process.
//
// Without a launcher initialize() makes a single process; graft built
// without MPI throws UnsupportedError when a launcher started several.
#pragma once

#include <vector>

#include "graft/device.h"

namespace graft::distributed {

struct InitializeOptions {
  int process_count = -1;  // -1: as the launcher says; otherwise checked against it
  int process_index = -1;
  // The virtual CPU devices of all processes together, split evenly over
  // them (e.g. 4: 4 devices alone, 2 each in 2 processes); -1: each process
  // makes GRAFT_CPU_DEVICES of its own.
  int cpu_devices = -1;
};

// Joins the processes the launcher started; a second call does nothing.
void initialize(const InitializeOptions& options = {});
bool is_initialized();
int process_index();  // 0 before initialize()
int process_count();  // 1 before initialize()
// This process's devices (devices() lists every process's).
std::vector<Device> local_devices();

}  // namespace graft::distributed
