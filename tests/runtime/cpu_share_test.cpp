// Sharing the machine (runtime/cpu_share.h): while other processes keep the
// cores busy, graft's parallel regions use only the cores left; results are
// the same on any thread count.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <thread>
#include <vector>

#include "graft/graft.h"
#include "runtime/cpu_share.h"
#include "support/arrays.h"
#include "support/shell.h"

namespace {

// Busy processes (forked children spinning until killed), one per CPU this
// process may run on, so that no core is free whatever else runs.
class BusyProcesses {
 public:
  BusyProcesses() {
    const long n = std::max(2L, sysconf(_SC_NPROCESSORS_ONLN));
    for (long i = 0; i < n; ++i) {
      const pid_t pid = fork();
      REQUIRE(pid >= 0);
      if (pid == 0) {
        for (;;) asm volatile("" ::: "memory");
      }
      pids_.push_back(pid);
    }
  }
  ~BusyProcesses() {
    for (pid_t pid : pids_) kill(pid, SIGKILL);
    for (pid_t pid : pids_) waitpid(pid, nullptr, 0);
  }

 private:
  std::vector<pid_t> pids_;
};

// threads_beside_other_work(wanted) once the estimate has seen the machine
// as it is now: polled until it gives `expected`, for up to 2 s (two samples
// 10 ms apart suffice; the first may predate the busy processes).
int threads_seen(int wanted, int expected) {
  int threads = graft::runtime::threads_beside_other_work(wanted);
  for (int i = 0; i < 200 && threads != expected; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    threads = graft::runtime::threads_beside_other_work(wanted);
  }
  return threads;
}

}  // namespace

TEST_CASE("cpu share: with every core busy elsewhere, regions run on one thread", "[runtime][cpu_share]") {
  CHECK(graft::runtime::threads_beside_other_work(1) == 1);
  const graft::Array x = graft::test::randn({1 << 18}, 3);
  auto f = graft::jit([](const graft::Array& a) { return graft::sum(graft::tanh(a * 1.5f) * a); });
  const float alone = f(x).item<float>();
  {
    BusyProcesses busy;
    CHECK(threads_seen(4, 1) == 1);
    CHECK(f(x).item<float>() == alone);  // fixed chunks: the same sum on one thread
  }
}

TEST_CASE("cpu share: GRAFT_SHARE_CPUS=0 keeps every thread", "[runtime][cpu_share]") {
  graft::test::check_child_passes("GRAFT_SHARE_CPUS=0", "[.child_cpu_share_off]");
}

TEST_CASE("cpu share (child): off, the thread count stays", "[.child_cpu_share_off]") {
  BusyProcesses busy;
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  for (int i = 0; i < 5; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(12));
    CHECK(graft::runtime::threads_beside_other_work(4) == 4);
  }
}
