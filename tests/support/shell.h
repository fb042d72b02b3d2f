// Running programs from tests: a shell command's output, this test binary
// again in a child process (for settings read once per process), and
// `go tool pprof` in a scratch directory.
#pragma once

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace graft::test {

// Runs a shell command; returns its stdout and stderr together.
inline std::string run(const std::string& command, int* status) {
  std::string out;
  std::FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  *status = pclose(pipe);
  return out;
}

// Runs the test cases matching `spec` (e.g. a hidden tag "[.child]") in a new
// process of this binary, with `env` ("A=1 B=2") prepended.
inline std::string run_self(const std::string& env, const std::string& spec, int* status) {
  std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  return run(env + " '" + self + "' '" + spec + "'", status);
}

// Runs the hidden test cases matching `spec` in a child with `env`, and
// checks that every one of them passed (showing the child's output if not).
inline void check_child_passes(const std::string& env, const std::string& spec) {
  int status = 0;
  std::string out = run_self(env, spec, &status);
  INFO(out);
  CHECK(status == 0);
  CHECK(out.find("All tests passed") != std::string::npos);
}

inline bool have_go() { return std::system("command -v go >/dev/null 2>&1") == 0; }

// The prefix of a `go tool pprof` command run in `dir`: go wants a writable
// HOME and build cache, and runs outside any module with the installed toolchain.
inline std::string go_pprof_command(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir / "home");
  return "cd '" + dir.string() + "' && HOME='" + (dir / "home").string() + "' GOCACHE='" +
         (dir / "gocache").string() + "' GOPATH='" + (dir / "gopath").string() +
         "' GOTOOLCHAIN=local GOFLAGS= go tool pprof ";
}

}  // namespace graft::test
