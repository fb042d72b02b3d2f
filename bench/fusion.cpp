// Fusion: an 8-op elementwise chain on 16M f32, side by side:
//   eager            op by op (each op reads and writes a 64 MB array)
//   graph, unfused   the traced graph run node by node by the interpreter
//   jit interpreter  simplified and fused: one kernel, run by the tiled evaluator
//   jit cpu          the same kernel as generated C++ (compiled once, cached)
//   hand loop        one OpenMP loop over the elements (std::tanh, std::exp)
//   hand Eigen loop  the same loop over 4096-element chunks, each one Eigen
//                    expression (vectorised tanh and exp, as the interpreter's kernels)
// Goals: jit cpu <= 1.15x the hand loop; jit interpreter <= 2x.
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "graft/graft.h"
#include "timing.h"

using namespace graft;

int main() {
  const int64_t n = int64_t{1} << 24;
  const float a = 0.7f, b = 0.1f, c = 1.3f;
  // y = (tanh(x * a + b) * c - exp(-x)) * x: mul, add, tanh, mul, neg, exp, sub, mul.
  auto f = [&](const Array& x) { return (graft::tanh(x * a + b) * c - graft::exp(-x)) * x; };

  Array x = astype(arange(n), f32) * (1.0f / static_cast<float>(n)) - 0.5f;
  std::vector<float> xs = x.to_vector<float>();

  double t_eager = best_seconds([&] { Array y = f(x); });

  Graph g = make_graph(f)(x);
  double t_graph = best_seconds([&] { std::vector<Array> y = evaluate(g, {x}); });

  auto jf = jit(f, {.backend = Backend::interpreter});
  Array warm = jf(x);  // compile outside the timing
  double t_jit = best_seconds([&] { Array y = jf(x); });

  auto jc = jit(f, {.backend = Backend::cpu});
  Array warm_cpu = jc(x);
  double t_cpu = best_seconds([&] { Array y = jc(x); });

  std::vector<float> out(static_cast<size_t>(n));
  double t_loop = best_seconds([&] {
    const float* in = xs.data();
    float* y = out.data();
#pragma omp parallel for
    for (int64_t i = 0; i < n; ++i) {
      const float v = in[i];
      y[i] = (std::tanh(v * a + b) * c - std::exp(-v)) * v;
    }
    asm volatile("" : : "r"(y) : "memory");
  });

  std::vector<float> out_eigen(static_cast<size_t>(n));
  double t_eigen = best_seconds([&] {
    const float* in = xs.data();
    float* y = out_eigen.data();
#pragma omp parallel for schedule(static)
    for (int64_t c0 = 0; c0 < n; c0 += 4096) {
      const int64_t len = std::min<int64_t>(4096, n - c0);
      Eigen::Map<const Eigen::ArrayXf> v(in + c0, len);
      Eigen::Map<Eigen::ArrayXf> w(y + c0, len);
      w = ((v * a + b).tanh() * c - (-v).exp()) * v;
    }
    asm volatile("" : : "r"(y) : "memory");
  });

  // The results agree (the evaluator runs the interpreter's vectorised kernels,
  // the loop the C library's functions: they differ in the last bits).
  std::vector<float> got = warm.to_vector<float>();
  double max_err = 0;
  for (size_t i = 0; i < got.size(); ++i) max_err = std::max(max_err, static_cast<double>(std::fabs(got[i] - out[i])));

  std::printf("8-op elementwise chain on f32[%lld]: y = (tanh(x*a + b)*c - exp(-x)) * x\n", static_cast<long long>(n));
  std::printf("%-28s %10s %12s\n", "", "ms", "vs hand loop");
  auto row = [&](const char* name, double t) { std::printf("%-28s %10.2f %11.2fx\n", name, t * 1e3, t / t_loop); };
  row("eager (op by op)", t_eager);
  row("graph, unfused interpreter", t_graph);
  row("jit interpreter (fused)", t_jit);
  row("jit cpu (generated C++)", t_cpu);
  row("hand-written OpenMP loop", t_loop);
  row("hand-written Eigen loop", t_eigen);
  std::printf("jit interpreter vs the Eigen loop: %.2fx\n", t_jit / t_eigen);
  std::vector<float> got_cpu = warm_cpu.to_vector<float>();
  bool same = got_cpu == got;
  std::printf("goals: jit cpu <= 1.15x the hand loop (%s), jit interpreter <= 2x (%s); max |jit - loop| = %.3g; "
              "jit cpu %s jit interpreter bit for bit\n",
              t_cpu <= 1.15 * t_loop ? "met" : "NOT met", t_jit <= 2 * t_loop ? "met" : "NOT met", max_err,
              same ? "equals" : "DIFFERS from");
  return 0;
}
