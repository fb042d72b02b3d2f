// libgomp's wait policy as graft sets it (runtime/openmp_wait/openmp_wait.h):
// a short spin chosen before libgomp starts, the user's own setting kept, and
// the environment left as the user made it. Each case runs in a child, since
// libgomp reads its environment once per process.
#include <fcntl.h>
#include <omp.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "graft/graft.h"
#include "support/shell.h"

namespace {

// What libgomp itself reports (omp_display_env writes it to stderr).
std::string libgomp_environment() {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("graft-omp-env-" + std::to_string(getpid()) + ".txt");
  std::fflush(stderr);
  const int saved = dup(2);
  const int fd = open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0600);
  REQUIRE(fd >= 0);
  dup2(fd, 2);
  omp_display_env(1);
  std::fflush(stderr);
  dup2(saved, 2);
  close(fd);
  close(saved);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::filesystem::remove(path);
  return text.str();
}

// The spin count libgomp is using, or -1 when it does not say.
long long libgomp_spin_count() {
  std::smatch m;
  const std::string env = libgomp_environment();
  if (!std::regex_search(env, m, std::regex("GOMP_SPINCOUNT = '([0-9]+)'"))) return -1;
  return std::stoll(m[1]);
}

}  // namespace

TEST_CASE("openmp wait: graft sets a short spin before libgomp starts", "[openmp]") {
  graft::test::check_child_passes("env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT", "[.child_openmp_short_spin]");
}

TEST_CASE("openmp wait (child): libgomp spins what graft measured, and the variable is gone",
          "[.child_openmp_short_spin]") {
  const std::string info = graft::build_info();
  INFO(info);
  std::smatch m;
  REQUIRE(std::regex_search(info, m, std::regex("spin ~30 us then sleep \\(graft set GOMP_SPINCOUNT=([0-9]+)")));
  const long long asked = std::stoll(m[1]);
  CHECK(asked >= 100);
  CHECK(asked <= 3000000);
  CHECK(libgomp_spin_count() == asked);             // libgomp read it: graft ran first
  CHECK(std::getenv("GOMP_SPINCOUNT") == nullptr);  // and children inherit the user's environment
  // Kernels still run on all threads with it.
  CHECK(graft::sum(graft::ones({1 << 20})).item<float>() == float(1 << 20));
}

TEST_CASE("openmp wait: the user's GOMP_SPINCOUNT or OMP_WAIT_POLICY wins", "[openmp]") {
  graft::test::check_child_passes("env -u OMP_WAIT_POLICY GOMP_SPINCOUNT=777", "[.child_openmp_user_spin]");
  graft::test::check_child_passes("env -u GOMP_SPINCOUNT OMP_WAIT_POLICY=passive", "[.child_openmp_user_policy]");
}

TEST_CASE("openmp wait (child): GOMP_SPINCOUNT=777 is kept", "[.child_openmp_user_spin]") {
  const std::string info = graft::build_info();
  INFO(info);
  CHECK(info.find("OpenMP threads (graft's, OpenBLAS's, oneDNN's): as the environment sets it (GOMP_SPINCOUNT=777)") !=
        std::string::npos);
  CHECK(libgomp_spin_count() == 777);
  REQUIRE(std::getenv("GOMP_SPINCOUNT") != nullptr);
  CHECK(std::string(std::getenv("GOMP_SPINCOUNT")) == "777");
}

TEST_CASE("openmp wait (child): OMP_WAIT_POLICY=passive is kept", "[.child_openmp_user_policy]") {
  const std::string info = graft::build_info();
  INFO(info);
  CHECK(info.find("as the environment sets it (OMP_WAIT_POLICY=passive)") != std::string::npos);
  CHECK(libgomp_spin_count() == 0);  // libgomp's passive policy: sleep at once
}

// Loaded into a program whose libgomp had already started, graft cannot
// choose the spin count, and build_info() says so instead of claiming it did.
TEST_CASE("openmp wait: loaded after libgomp started, build_info says graft could not choose", "[openmp]") {
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
    WARN("skipped: one CPU (a started libgomp looks like one that has not)");
    return;
  }
  int status = 0;
  const std::string out =
      graft::test::run(std::string("env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT -u OMP_NUM_THREADS '") +
                           GRAFT_OPENMP_LATE_LOAD + "' '" + GRAFT_LIBRARY_FILE + "'",
                       &status);
  INFO(out);
  REQUIRE(status == 0);
  CHECK(out.find("OpenMP threads (graft's, OpenBLAS's, oneDNN's): libgomp's default, 300000 spins (libgomp started "
                 "before graft was loaded") != std::string::npos);
}
