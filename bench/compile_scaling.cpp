// bench/compile_scaling: what jit costs before anything runs, for graphs of
// 1k, 10k and 100k nodes: tracing, differentiating (grad), and jit's passes
// (simplify, fold, fuse, plan memory), each in ms and per node, so linear
// scaling shows as a flat per-node column. The C++ compiler's time for the
// cpu backend is reported separately (it depends on the kernels, not on graft).
// Goals (issue 7): linear; 100k nodes with grad <= 1 s.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <functional>

#include "graft/graft.h"

using namespace graft;

namespace {

double ms_of(const std::function<void()>& f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// About 4 nodes per step: mul, add, tanh (and the scalars' broadcasts, shared);
// every 32nd step recentres with a mean (a reduction ends a fused kernel).
std::function<Array(const Array&)> model(int steps) {
  return [steps](const Array& x) {
    Array y = x;
    for (int i = 0; i < steps; ++i) {
      y = tanh(y * 0.9f + 0.1f) * 1.1f;
      if (i % 32 == 31) y = y - mean(y);
    }
    return sum(y * y);
  };
}

}  // namespace

int main(int argc, char** argv) {
  // ./compile_scaling [steps]: one size only, without the C++ compiler (for profiling).
  const int only = argc > 1 ? std::atoi(argv[1]) : 0;
  std::vector<int> sizes = only ? std::vector<int>{only} : std::vector<int>{250, 2500, 25000};
  Array x = astype(linspace(-1.0, 1.0, 64), f32);
  std::printf("%8s %10s | %9s %9s | %9s %9s %9s | %9s %9s | %9s\n", "steps", "nodes", "trace ms", "us/node",
              "grad ms", "nodes", "us/node", "jit ms", "us/node", "g++ ms");
  double grad_100k = 0;
  for (int steps : sizes) {
    auto f = model(steps);
    int64_t nodes = 0, grad_nodes = 0;
    double t_trace = ms_of([&] { nodes = make_graph(f)(x).num_nodes(); });
    double t_grad = ms_of([&] { grad_nodes = make_graph(grad(f))(x).num_nodes(); });
    // jit's own passes on the gradient graph, with the interpreter backend (no C++ compiler).
    auto jg = jit(grad(f), JitOptions{.backend = Backend::interpreter});
    auto lowered = jg.lower(x);  // traces (already measured above)
    double t_jit = ms_of([&] { lowered.compile(); });
    // The C++ compiler, for the cpu backend (skipped for the largest graph: minutes of g++).
    double t_cxx = -1;
    if (steps <= 2500 && !only) {
      auto jc = jit(grad(f), JitOptions{.backend = Backend::cpu}).lower(x);
      t_cxx = ms_of([&] { jc.compile(); }) - t_jit;
    }
    if (steps == 25000) grad_100k = t_grad + t_jit;
    std::printf("%8d %10lld | %9.1f %9.2f | %9.1f %9lld %9.2f | %9.1f %9.2f | %9s\n", steps, (long long)nodes, t_trace,
                1e3 * t_trace / double(nodes), t_grad, (long long)grad_nodes, 1e3 * t_grad / double(grad_nodes), t_jit,
                1e3 * t_jit / double(grad_nodes), t_cxx < 0 ? "skipped" : std::to_string(int(t_cxx)).c_str());
  }
  std::printf("grad + jit passes at ~100k traced nodes: %.0f ms (goal <= 1000 ms: %s)\n", grad_100k,
              grad_100k <= 1000 ? "met" : "NOT met");
  return 0;
}
