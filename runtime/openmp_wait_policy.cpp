#include "runtime/openmp_wait_policy.h"

#include <cstdlib>

#include "runtime/openmp_wait/openmp_wait.h"

namespace graft::runtime {
namespace {

// libgraft starts after libgomp (it depends on it), so by now libgomp has read
// the GOMP_SPINCOUNT graft asked for; take it back out of the environment so
// the processes this one starts inherit the user's settings, not graft's.
const bool kEnvironmentRestored = [] {
  if (graft_openmp_wait_choice() == 1) unsetenv("GOMP_SPINCOUNT");
  return true;
}();

std::string user_setting() {
  std::string s;
  for (const char* name : {"OMP_WAIT_POLICY", "GOMP_SPINCOUNT"}) {
    if (const char* v = std::getenv(name)) s += std::string(s.empty() ? "" : ", ") + name + "=" + v;
  }
  return s;
}

}  // namespace

std::string openmp_wait_description() {
  (void)kEnvironmentRestored;
  const std::string us = std::to_string(graft_openmp_spin_ns / 1000);
  switch (graft_openmp_wait_choice()) {
    case 1:
      return "spin ~" + us + " us then sleep (graft set GOMP_SPINCOUNT=" + std::to_string(graft_openmp_spin_count()) +
             ", measured for this CPU, for libgomp at load and removed it after; set OMP_WAIT_POLICY or "
             "GOMP_SPINCOUNT to choose)";
    case 2: return "as the environment sets it (" + user_setting() + ")";
    case 3:
      return "libgomp's default, 300000 spins (libgomp started before graft was loaded; set GOMP_SPINCOUNT "
             "for threads that sleep sooner on a shared machine: graft asks for ~" +
             us + " us of spinning)";
    default: return "libgomp's default (graft's wait-policy library did not run)";
  }
}

}  // namespace graft::runtime
