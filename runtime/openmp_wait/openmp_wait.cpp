// libgraft_openmp_wait.so: sets libgomp's spin count before libgomp starts
// (openmp_wait.h says why and how). It depends on libc alone; linking it to
// libgomp would make the loader start libgomp first.
#include "openmp_wait.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace {

int choice = 0;
long long spin_count = 0;

// One iteration of libgomp's spin loop: a load, a compare and a pause.
inline void spin_once() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// The spin count that lasts about graft_openmp_spin_ns on this core: time a
// few thousand spins (tens of microseconds, once) and keep the fastest of
// three tries, since an interrupt can only make a try slower.
long long calibrated_spin_count() {
  constexpr int kSpins = 2000;
  volatile int flag = 0;
  double best_ns = 1e300;
  for (int attempt = 0; attempt < 3; ++attempt) {
    timespec a{}, b{};
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < kSpins && flag == 0; ++i) spin_once();
    clock_gettime(CLOCK_MONOTONIC, &b);
    const double ns = double(b.tv_sec - a.tv_sec) * 1e9 + double(b.tv_nsec - a.tv_nsec);
    if (ns < best_ns) best_ns = ns;
  }
  const double per_spin = best_ns > 0 ? best_ns / kSpins : 1.0;
  const double count = double(graft_openmp_spin_ns) / (per_spin < 0.1 ? 0.1 : per_spin);
  return count < 100 ? 100 : count > 3000000 ? 3000000 : (long long)count;
}

// Whether libgomp has already read its environment. Before it starts, its
// global thread count is the static default 1; after, it is the CPU count or
// OMP_NUM_THREADS. (A process limited to one thread cannot be told apart, and
// there the spin count does not matter.) Looked up, not linked: see above.
bool libgomp_started() {
  using MaxThreads = int (*)();
  auto* f = reinterpret_cast<MaxThreads>(dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
  return f != nullptr && f() > 1;
}

__attribute__((constructor)) void ask_for_short_spin() {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr || std::getenv("GOMP_SPINCOUNT") != nullptr) {
    choice = 2;
  } else if (libgomp_started()) {
    choice = 3;
  } else {
    spin_count = calibrated_spin_count();
    char value[32];
    std::snprintf(value, sizeof value, "%lld", spin_count);
    choice = setenv("GOMP_SPINCOUNT", value, 0) == 0 ? 1 : 0;
  }
}

}  // namespace

extern "C" int graft_openmp_wait_choice() { return choice; }

extern "C" long long graft_openmp_spin_count() { return spin_count; }
