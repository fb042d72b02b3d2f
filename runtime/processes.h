// This process's place among the processes of a multi-process run: the MPI
// ranks a launcher (mpirun) started, each with the same number of local
// devices. MPI stays inside runtime/ (processes.cpp, process_communicator.cpp);
// without MPI graft runs as one process and says so when a launcher started
// several.
#pragma once

#include <memory>
#include <string>

namespace graft::runtime {

class Communicator;

struct Processes {
  int index = 0;          // this process, 0..count-1
  int count = 1;
  int local_devices = 1;  // devices per process (the same in each)
  bool initialized = false;
};

const Processes& processes();

// Device ids are global and process-major: process p's local device i is
// p * devices().size() + i (with one process, the local ids).
int global_device_id(int process, int local_id);
// The process whose device `global_id` is, or -1 for an id no process has.
int process_of_device(int global_id);
// Every process's devices together.
int global_device_count();

// Joins the processes the launcher started (MPI_Init_thread, then a check
// that every process has as many devices). expected_* (-1: take the
// launcher's) are checked against what MPI reports. A second call with the
// same answer does nothing. Throws graft::Error when the processes do not
// agree, UnsupportedError when several were launched and graft was built
// without MPI.
// cpu_devices > 0: the virtual CPU devices of all processes together, split
// evenly (it sets each process's GRAFT_CPU_DEVICES, so it must come before
// graft's devices are made).
void initialize_processes(int expected_count, int expected_index, int cpu_devices);

// How many processes the launcher's environment says were started (1 if none).
int launched_process_count();
bool built_with_mpi();

// GRAFT_COLLECTIVE_TIMEOUT (seconds, default 300): how long a collective may
// wait for the other replicas before it aborts and names itself.
double collective_timeout_seconds();

// Prints `message` and ends every process of the run (MPI_Abort), or, with
// one process, this one (std::abort).
[[noreturn]] void abort_processes(const std::string& message);

// `local_size` replicas in this process joined over MPI with as many in
// every other process; only after initialize_processes with count > 1.
std::unique_ptr<Communicator> make_process_communicator(int local_size);

}  // namespace graft::runtime
