// Running a peer's side of a benchmark: a Python script (NumPy, JAX) in the
// Python the user names (a venv outside the repository), its output printed
// in line with graft's.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

// A peer benchmark's options: --python PY (the Python with NumPy/JAX; none:
// graft's rows only) and --repeats N.
struct PeerArgs {
  std::string python;
  int repeats;
};
inline PeerArgs parse_peer_args(int argc, char** argv, int default_repeats) {
  PeerArgs a{"", default_repeats};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--python" && i + 1 < argc) a.python = argv[++i];
    else if (arg == "--repeats" && i + 1 < argc) a.repeats = std::atoi(argv[++i]);
  }
  return a;
}

// Python for a peer script: spread(f, n) times n calls of f and returns the
// (min, median, max) seconds, as timed_spread does on graft's side (the
// script imports time).
inline const char* const kPythonSpread =
    "def spread(f, n):\n"
    "  t = []\n"
    "  for _ in range(n):\n"
    "    t0 = time.perf_counter(); f(); t.append(time.perf_counter() - t0)\n"
    "  t.sort(); return t[0], t[len(t) // 2], t[-1]\n";

// Writes `script` to `path` and runs it with `python`; says so when it fails.
inline void run_python_script(const std::string& python, const std::string& path, const std::string& script) {
  if (FILE* fp = std::fopen(path.c_str(), "w")) {
    std::fputs(script.c_str(), fp);
    std::fclose(fp);
  }
  std::fflush(stdout);
  const std::string cmd = python + " " + path;
  if (std::system(cmd.c_str()) != 0) std::printf("  (%s failed)\n", cmd.c_str());
}
