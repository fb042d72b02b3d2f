#include "runtime/cpu_share.h"

#include <dirent.h>
#include <fcntl.h>
#include <omp.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace graft::runtime {
namespace {

constexpr int64_t kSampleEveryNs = 10'000'000;

bool enabled() {
  static const bool on = [] {
    const char* v = std::getenv("GRAFT_SHARE_CPUS");
    return v == nullptr || std::strcmp(v, "0") != 0;
  }();
  return on;
}

// Reads a small /proc file into buf; returns its length, or -1.
int read_small(const char* path, char* buf, int size) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  const ssize_t n = read(fd, buf, static_cast<size_t>(size - 1));
  close(fd);
  if (n < 0) return -1;
  buf[n] = '\0';
  return static_cast<int>(n);
}

// Runnable threads on the machine (/proc/loadavg's "running/total"), or -1.
int machine_running() {
  char buf[128];
  if (read_small("/proc/loadavg", buf, sizeof buf) < 0) return -1;
  const char* slash = std::strchr(buf, '/');
  if (slash == nullptr) return -1;
  const char* p = slash;
  while (p > buf && p[-1] >= '0' && p[-1] <= '9') --p;
  return p == slash ? -1 : std::atoi(p);
}

// This process's threads that are running or runnable (state R).
int own_running() {
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return 0;
  int count = 0;
  char path[300], buf[512];
  while (const dirent* e = readdir(dir)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
    if (read_small(path, buf, sizeof buf) < 0) continue;
    // "tid (comm) S ...": the state follows the last ')' (comm may hold one).
    const char* close_paren = std::strrchr(buf, ')');
    if (close_paren != nullptr && close_paren[1] == ' ' && close_paren[2] == 'R') ++count;
  }
  closedir(dir);
  return count;
}

int cpus_available() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::atomic<int64_t> next_sample_ns{0};
std::atomic<int> previous_others{0};
std::atomic<int> others_estimate{0};  // the smaller of the last two samples

// Other processes' runnable threads, resampled when the last sample is old.
// One caller samples; the others use the estimate it last made.
int others_busy() {
  const int64_t now = now_ns();
  int64_t due = next_sample_ns.load(std::memory_order_relaxed);
  if (now >= due && next_sample_ns.compare_exchange_strong(due, now + kSampleEveryNs)) {
    const int running = machine_running();
    const int others = running < 0 ? 0 : std::max(0, running - own_running());
    const int before = previous_others.exchange(others, std::memory_order_relaxed);
    others_estimate.store(std::min(before, others), std::memory_order_relaxed);
  }
  return others_estimate.load(std::memory_order_relaxed);
}

}  // namespace

int threads_beside_other_work(int wanted) {
  if (wanted <= 1 || !enabled()) return wanted;
  static const int cpus = cpus_available();
  const int free_cpus = cpus - others_busy();
  return std::clamp(free_cpus, 1, wanted);
}

// This thread's OpenMP thread count before ShareCpusWithOtherWork lowered it, or 0.
thread_local int unshared_threads = 0;

ShareCpusWithOtherWork::ShareCpusWithOtherWork() {
  if (omp_in_parallel() || unshared_threads > 0) return;  // nested: the outer guard decided
  const int wanted = omp_get_max_threads();
  const int threads = threads_beside_other_work(wanted);
  if (threads != wanted) {
    omp_set_num_threads(threads);
    restore_ = wanted;
    unshared_threads = wanted;
  }
}

ShareCpusWithOtherWork::~ShareCpusWithOtherWork() {
  if (restore_ > 0) {
    omp_set_num_threads(restore_);
    unshared_threads = 0;
  }
}

AllThreads::AllThreads() {
  if (unshared_threads > 0 && !omp_in_parallel()) {
    restore_ = omp_get_max_threads();
    omp_set_num_threads(unshared_threads);
  }
}

AllThreads::~AllThreads() {
  if (restore_ > 0) omp_set_num_threads(restore_);
}

}  // namespace graft::runtime
