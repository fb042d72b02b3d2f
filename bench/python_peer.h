// Running a peer's side of a benchmark: a Python script (NumPy, JAX) in the
// Python the user names (a venv outside the repository), its output printed
// in line with graft's.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

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
