// Running a peer's side of a benchmark: a Python script (NumPy, JAX) in the
// Python the user names (a venv outside the repository), its output printed
// in line with graft's.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <utility>
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

// A training-step peer's figures, parsed from its script's lines "loss <step>
// <value>", "temp_mib <x>" (XLA's planned temporaries) and "ms <min>
// <median> <max>"; -1 where it printed none.
struct StepPeerRun {
  double temp_mib = -1, ms[3] = {-1, -1, -1};
  std::vector<double> losses;
};
inline StepPeerRun run_step_peer(const std::string& python, const std::string& path, const std::string& script) {
  StepPeerRun r;
  if (python.empty()) return r;
  for (const std::string& line : python_output_lines(python, path, script)) {
    double a = 0, b = 0, c = 0;
    int i = 0;
    if (std::sscanf(line.c_str(), "temp_mib %lf", &a) == 1)
      r.temp_mib = a;
    else if (std::sscanf(line.c_str(), "loss %d %lf", &i, &a) == 2)
      r.losses.push_back(a);
    else if (std::sscanf(line.c_str(), "ms %lf %lf %lf", &a, &b, &c) == 3)
      r.ms[0] = a, r.ms[1] = b, r.ms[2] = c;
  }
  return r;
}

// "median (min-max)" of a peer's step time, or "-".
inline std::string step_time_cell(const StepPeerRun& p) {
  char buf[96];
  if (p.ms[1] <= 0) return "-";
  std::snprintf(buf, sizeof buf, "%.1f (%.1f-%.1f)", p.ms[1], p.ms[0], p.ms[2]);
  return buf;
}

// "g/p x", or "-" when the peer has no figure.
inline std::string ratio_cell(double g, double p) {
  char buf[32];
  if (p <= 0) return "-";
  std::snprintf(buf, sizeof buf, "%.2fx", g / p);
  return buf;
}

// Prints graft's losses beside each peer's and returns the largest
// difference (0 when no peer printed as many).
inline double print_losses(const std::vector<double>& graft,
                           const std::vector<std::pair<const char*, const StepPeerRun*>>& peers) {
  double worst = 0;
  std::printf("\nlosses, steps 0-%zu: graft", graft.size() - 1);
  for (double l : graft) std::printf(" %.6f", l);
  for (const auto& [name, peer] : peers) {
    if (peer->losses.size() != graft.size()) continue;
    double d = 0;
    std::printf("; %s", name);
    for (size_t i = 0; i < graft.size(); ++i) {
      std::printf(" %.6f", peer->losses[i]);
      d = std::max(d, std::fabs(graft[i] - peer->losses[i]));
    }
    std::printf(" (largest difference %.2g)", d);
    worst = std::max(worst, d);
  }
  std::printf("\n");
  return worst;
}

// Prints a training step's table: graft's step time (seconds) and planned
// temporaries (MiB) beside the peers', with the ratios.
inline void print_step_table(int repeats, double median, double min, double max, double temp_mib,
                             const StepPeerRun& jax, const StepPeerRun& torch) {
  std::printf("\n| | graft | JAX | PyTorch (eager) | graft / JAX | graft / PyTorch |\n|---|---|---|---|---|---|\n");
  std::printf("| step time, ms: median (min-max) over %d steps | %.1f (%.1f-%.1f) | %s | %s | %s | %s |\n", repeats,
              median * 1e3, min * 1e3, max * 1e3, step_time_cell(jax).c_str(), step_time_cell(torch).c_str(),
              ratio_cell(median * 1e3, jax.ms[1]).c_str(), ratio_cell(median * 1e3, torch.ms[1]).c_str());
  std::printf("| planned temporaries, MiB | %.1f | %s | - | %s | - |\n", temp_mib,
              jax.temp_mib >= 0 ? std::to_string(jax.temp_mib).c_str() : "-",
              ratio_cell(temp_mib, jax.temp_mib).c_str());
}

// The end of a peer's step script: times `call` (a Python callable) with
// spread() and prints "ms <min> <median> <max>".
inline std::string python_step_timing(const std::string& call, int repeats) {
  return "r = spread(" + call + ", " + std::to_string(repeats) + ")\nprint('ms', r[0] * 1e3, r[1] * 1e3, r[2] * 1e3)\n";
}

// The start of a PyTorch step script: imports, spread(), the thread count
// graft uses, and leaf(array), a trainable tensor.
inline std::string torch_script_start() {
  return std::string("import os, time, numpy as np, torch, torch.nn.functional as F\n") + kPythonSpread +
         "torch.set_num_threads(int(os.environ.get('OMP_NUM_THREADS', os.cpu_count())))\n"
         "leaf = lambda a: torch.tensor(a, requires_grad=True)\n";
}

// Prints how far each peer's first loss is from graft's and returns whether
// the largest difference is within `bound`.
inline bool first_loss_agrees(const std::vector<double>& graft, const std::vector<const StepPeerRun*>& peers,
                              double bound) {
  double first = 0;
  for (const StepPeerRun* peer : peers)
    if (!peer->losses.empty() && !graft.empty()) first = std::max(first, std::fabs(peer->losses[0] - graft[0]));
  std::printf("first loss: largest difference %.2g (at most %.0e)\n", first, bound);
  return first <= bound;
}
