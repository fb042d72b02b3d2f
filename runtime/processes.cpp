#include "runtime/processes.h"

#include <cstdio>
#include <algorithm>
#include <cstdlib>
#include <mutex>

#include "graft/errors.h"
#include "runtime/communicator.h"
#include "runtime/device.h"
#if GRAFT_HAVE_MPI
#include "runtime/mpi_world.h"
#endif

namespace graft::runtime {
namespace {

Processes g_processes;
std::mutex g_mutex;

int env_int(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return -1;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  return *end == '\0' && x >= 0 && x < (1 << 20) ? static_cast<int>(x) : -1;
}

// The launcher's view: Open MPI's mpirun, then the PMI variables of
// MPICH's Hydra and Slurm.
[[maybe_unused]] int launched_process_index() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"}) {
    const int v = env_int(name);
    if (v >= 0) return v;
  }
  return 0;
}

void check_expected(int expected_count, int expected_index, int count, int index) {
  if (expected_count >= 0 && expected_count != count)
    throw Error("distributed::initialize: process_count " + std::to_string(expected_count) + " was asked for but " +
                std::to_string(count) + " process(es) were started");
  if (expected_index >= 0 && expected_index != index)
    throw Error("distributed::initialize: process_index " + std::to_string(expected_index) +
                " was asked for but the launcher made this process " + std::to_string(index));
}

#if GRAFT_HAVE_MPI
MPI_Comm g_world = MPI_COMM_NULL;

void finalize_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}
#endif

}  // namespace

#if GRAFT_HAVE_MPI
MPI_Comm mpi_world() { return g_world; }
#endif

const Processes& processes() { return g_processes; }

int global_device_id(int process, int local_id) { return process * static_cast<int>(devices().size()) + local_id; }

int process_of_device(int global_id) {
  const int local = static_cast<int>(devices().size());
  return global_id >= 0 && global_id < local * g_processes.count ? global_id / local : -1;
}

int global_device_count() { return static_cast<int>(devices().size()) * g_processes.count; }

bool built_with_mpi() { return GRAFT_HAVE_MPI != 0; }

int launched_process_count() {
  static const int count = [] {  // read once: pmap asks on every call
    for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"}) {
      const int v = env_int(name);
      if (v > 0) return v;
    }
    return 1;
  }();
  return count;
}

double collective_timeout_seconds() {
  static const double seconds = [] {
    const char* v = std::getenv("GRAFT_COLLECTIVE_TIMEOUT");
    if (!v || !*v) return 300.0;
    char* end = nullptr;
    const double s = std::strtod(v, &end);
    if (*end != '\0' || !(s > 0))
      throw Error(std::string("GRAFT_COLLECTIVE_TIMEOUT='") + v +
                  "' is not a positive number of seconds (the longest a collective waits for the other replicas)");
    return s;
  }();
  return seconds;
}

namespace {

// Makes this process's share of `total` virtual CPU devices the device count.
void split_cpu_devices(int total, int processes) {
  if (total <= 0) return;
  if (total % processes != 0)
    throw Error("distributed::initialize: cpu_devices " + std::to_string(total) + " do not split evenly over " +
                std::to_string(processes) + " processes");
  const int local = total / processes;
  if (devices_made()) {
    if (static_cast<int>(devices().size()) != local)
      throw Error("distributed::initialize: cpu_devices " + std::to_string(total) + " asks for " +
                  std::to_string(local) + " device(s) per process, but graft already made " +
                  std::to_string(devices().size()) + "; call initialize before graft uses a device");
    return;
  }
  setenv("GRAFT_CPU_DEVICES", std::to_string(local).c_str(), 1);
}

}  // namespace

void initialize_processes(int expected_count, int expected_index, int cpu_devices) {
  std::lock_guard lock(g_mutex);
  const int launched = launched_process_count();
  if (g_processes.initialized) {
    check_expected(expected_count, expected_index, g_processes.count, g_processes.index);
    return;
  }
  split_cpu_devices(cpu_devices, std::max(launched, 1));
  const int local = static_cast<int>(devices().size());
  if (launched <= 1 && expected_count <= 1) {
    check_expected(expected_count, expected_index, 1, 0);
    g_processes = Processes{0, 1, local, true};
    return;
  }
#if GRAFT_HAVE_MPI
  int provided = 0;
  int already = 0;
  MPI_Initialized(&already);
  if (!already) {
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
    std::atexit(finalize_at_exit);
  } else {
    MPI_Query_thread(&provided);
  }
  if (provided < MPI_THREAD_SERIALIZED)
    throw UnsupportedError("distributed::initialize: the MPI library offers thread level " + std::to_string(provided) +
                           "; graft needs MPI_THREAD_SERIALIZED or better (pmap's replicas run on threads)");
  MPI_Comm_dup(MPI_COMM_WORLD, &g_world);
  int index = 0, count = 1;
  MPI_Comm_rank(g_world, &index);
  MPI_Comm_size(g_world, &count);
  check_expected(expected_count, expected_index, count, index);
  std::vector<int> locals(static_cast<size_t>(count));
  MPI_Allgather(&local, 1, MPI_INT, locals.data(), 1, MPI_INT, g_world);
  for (int p = 0; p < count; ++p)
    if (locals[static_cast<size_t>(p)] != local)
      throw Error("distributed::initialize: process " + std::to_string(p) + " has " +
                  std::to_string(locals[static_cast<size_t>(p)]) + " device(s) and process " + std::to_string(index) +
                  " has " + std::to_string(local) + "; every process needs the same number (GRAFT_CPU_DEVICES)");
  g_processes = Processes{index, count, local, true};
  for (Device* d : devices()) d->set_name(d->kind() + ":" + std::to_string(global_device_id(index, d->id())));
#else
  (void)expected_index;
  throw UnsupportedError("distributed::initialize: this is process " + std::to_string(launched_process_index()) +
                         " of " + std::to_string(launched) +
                         " started by an MPI launcher, but graft was built without MPI; install Open MPI "
                         "(libopenmpi-dev, scripts/setup.sh does) and rebuild graft");
#endif
}

void abort_processes(const std::string& message) {
  std::fprintf(stderr, "graft: %s\n", message.c_str());
#if GRAFT_HAVE_MPI
  if (g_processes.count > 1) {
    std::fprintf(stderr, "graft: process %d ends every process of the run (MPI_Abort)\n", g_processes.index);
    std::fflush(stderr);
    MPI_Abort(g_world, 1);
  }
#endif
  std::fflush(stderr);
  std::abort();
}

#if !GRAFT_HAVE_MPI
std::unique_ptr<Communicator> make_process_communicator(int) {
  throw UnsupportedError("pmap across processes needs graft built with MPI");
}
#endif

}  // namespace graft::runtime
