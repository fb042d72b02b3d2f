// Running a peer's side of a benchmark: a Python script (NumPy, JAX) in the
// Python the user names (a venv outside the repository), its output printed
// in line with graft's.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

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

// Writes `script` to `path`, runs it with `python` and returns what it
// printed, one string per line (for a benchmark that prints ratios against
// the peer); says so and returns nothing when it fails.
inline std::vector<std::string> python_output_lines(const std::string& python, const std::string& path,
                                                    const std::string& script) {
  std::vector<std::string> lines;
  if (FILE* fp = std::fopen(path.c_str(), "w")) {
    std::fputs(script.c_str(), fp);
    std::fclose(fp);
  }
  std::fflush(stdout);
  FILE* p = popen((python + " " + path + " 2>/dev/null").c_str(), "r");
  if (!p) return lines;
  std::string text;
  char chunk[4096];
  while (size_t n = std::fread(chunk, 1, sizeof chunk, p)) text.append(chunk, n);
  const bool failed = pclose(p) != 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  if (failed || lines.empty()) {
    std::printf("  (%s %s failed)\n", python.c_str(), path.c_str());
    lines.clear();
  }
  return lines;
}
