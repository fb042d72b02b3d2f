// Fusion: elementwise chains on 16M f32, graft beside hand-written loops.
// Three chains: the 8-op y = (tanh(x*a + b)*c - exp(-x)) * x, and the two of
// issue 17: logistic(tanh(x*1.5 + 0.5)*x) - exp(x)*0.25 and
// exp(sin(x)*2 + x) - x*0.5. Each chain runs as
//   jit interpreter  simplified and fused: one kernel, run by the tiled evaluator
//   jit cpu          the same kernel as generated C++ (compiled once, cached)
//   vector loop      THE reference: one OpenMP loop, -O3 -march=native
//                    -ffast-math, so GCC calls glibc's vector math (libmvec)
//                    for exp/tanh/sin (vector_loops.cpp: what a careful
//                    engineer writes by hand)
// and, for the 8-op chain only, for context: eager op by op, the traced graph
// unfused, an Eigen expression per 4096-element chunk, and the scalar-libm
// loop (std::tanh, std::exp per element: a weak reference, labelled so).
// Goals (issue 17): jit cpu <= 1.3x the vector loop, jit interpreter <= 1.6x.
// The variants run interleaved, one call each per round, so drift on a busy
// machine touches all alike; ratios are per round: median [min, max].
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "graft/graft.h"
#include "timing.h"
#include "vector_loops.h"

using namespace graft;

namespace {

constexpr int kRounds = 9;

struct Variant {
  std::string name;
  std::function<void()> run;
  std::vector<double> s;  // seconds, one per round
};

// max |got - want| / max(1, |want|): relative for large values, absolute near 0.
double max_error(const std::vector<float>& got, const std::vector<float>& want) {
  double e = got.size() == want.size() ? 0 : 1e300;
  for (size_t i = 0; i < got.size() && i < want.size(); ++i)
    e = std::max(e, std::fabs(double(got[i]) - want[i]) / std::max(1.0, std::fabs(double(want[i]))));
  return e;
}

// Times the variants (the last one is the reference loop) and prints the table.
// Returns the per-round ratio medians, by name.
std::vector<double> table(std::vector<Variant>& vs) {
  for (Variant& v : vs) v.run();  // warm
  for (int r = 0; r < kRounds; ++r)
    for (Variant& v : vs) v.s.push_back(seconds_of(v.run));
  const Variant& ref = vs.back();
  std::printf("  %-46s %8s %8s   %s\n", "", "best ms", "med ms", "vs vector loop: median [min, max] of rounds");
  std::vector<double> medians;
  for (const Variant& v : vs) {
    std::vector<double> ratio;
    for (int r = 0; r < kRounds; ++r) ratio.push_back(v.s[r] / ref.s[r]);
    TimeSpread t = spread_of(v.s), q = spread_of(ratio);
    medians.push_back(q.median);
    std::printf("  %-46s %8.2f %8.2f   %5.2fx [%.2f, %.2f]\n", v.name.c_str(), t.min * 1e3, t.median * 1e3, q.median,
                q.min, q.max);
  }
  return medians;
}

void goals(double cpu, double interp) {
  std::printf("  goals: jit cpu <= 1.3x the vector loop (%.2fx: %s), jit interpreter <= 1.6x (%.2fx: %s)\n", cpu,
              cpu <= 1.3 ? "met" : "NOT met", interp, interp <= 1.6 ? "met" : "NOT met");
}

}  // namespace

int main() {
  const int64_t n = int64_t{1} << 24;
  const size_t un = static_cast<size_t>(n);
  std::printf("elementwise chains on f32[%lld]; the reference is a vector loop (OpenMP, -O3 -march=native -ffast-math,"
              " %s);\n%d interleaved rounds; this machine may be busy: read the spread\n",
              static_cast<long long>(n), vector_loops::math_library(), kRounds);
  std::vector<float> out(un), out_scalar(un), out_eigen(un);
  // Waits for the module, so that no timed call runs on the interpreter tier.
  auto cpu_options = JitOptions{.backend = Backend::cpu, .wait_for_compile = true};
  auto interp_options = JitOptions{.backend = Backend::interpreter};
  bool all_agree = true;
  auto agree = [&](const char* what, const Array& got, const std::vector<float>& want) {
    const double e = max_error(got.to_vector<float>(), want);
    all_agree = all_agree && e <= 1e-5;
    std::printf("  max |%s - vector loop| / max(1, |loop|) = %.2g (tolerance 1e-5)\n", what, e);
  };

  // ---- the 8-op chain, with the context rows.
  {
    const float a = 0.7f, b = 0.1f, c = 1.3f;
    auto f = [&](const Array& x) { return (graft::tanh(x * a + b) * c - graft::exp(-x)) * x; };
    Array x = astype(arange(n), f32) * (1.0f / static_cast<float>(n)) - 0.5f;  // [-0.5, 0.5)
    std::vector<float> xs = x.to_vector<float>();
    Graph g = make_graph(f)(x);
    auto ji = jit(f, interp_options);
    auto jc = jit(f, cpu_options);
    Array yi = ji(x), yc = jc(x);  // compile outside the timing
    std::vector<Variant> vs;
    vs.push_back({"eager (op by op)", [&] { Array y = f(x); }, {}});
    vs.push_back({"graph, unfused interpreter", [&] { std::vector<Array> y = evaluate(g, {x}); }, {}});
    vs.push_back({"jit interpreter (fused)", [&] { Array y = ji(x); }, {}});
    vs.push_back({"jit cpu (generated C++)", [&] { Array y = jc(x); }, {}});
    vs.push_back({"Eigen expression per 4096-chunk", [&] {
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
                  },
                  {}});
    vs.push_back({"scalar libm loop (weak reference, for context)", [&] {
                    const float* in = xs.data();
                    float* y = out_scalar.data();
#pragma omp parallel for
                    for (int64_t i = 0; i < n; ++i) {
                      const float v = in[i];
                      y[i] = (std::tanh(v * a + b) * c - std::exp(-v)) * v;
                    }
                    asm volatile("" : : "r"(y) : "memory");
                  },
                  {}});
    vs.push_back({"vector loop (the reference)", [&] { vector_loops::chain8(xs.data(), out.data(), n, a, b, c); }, {}});
    std::printf("\n8-op chain: y = (tanh(x*0.7 + 0.1)*1.3 - exp(-x)) * x, x in [-0.5, 0.5)\n");
    std::vector<double> m = table(vs);
    goals(m[3], m[2]);
    agree("jit cpu", yc, out);
    agree("jit interpreter", yi, out);
    std::printf("  jit cpu %s jit interpreter bit for bit\n",
                yc.to_vector<float>() == yi.to_vector<float>() ? "equals" : "DIFFERS from");
  }

  // ---- issue 17's two chains.
  Array x = (astype(arange(n), f32) * (1.0f / static_cast<float>(n)) - 0.5f) * 8.0f;  // [-4, 4)
  std::vector<float> xs = x.to_vector<float>();
  struct Chain {
    const char* title;
    std::function<Array(const Array&)> f;
    void (*loop)(const float*, float*, int64_t);
  };
  const Chain chains[] = {
      {"logistic(tanh(x*1.5 + 0.5)*x) - exp(x)*0.25",
       [](const Array& v) { return graft::logistic(graft::tanh(v * 1.5f + 0.5f) * v) - graft::exp(v) * 0.25f; },
       vector_loops::logistic_chain},
      {"exp(sin(x)*2 + x) - x*0.5", [](const Array& v) { return graft::exp(graft::sin(v) * 2.0f + v) - v * 0.5f; },
       vector_loops::sin_chain},
  };
  for (const Chain& ch : chains) {
    auto ji = jit(ch.f, interp_options);
    auto jc = jit(ch.f, cpu_options);
    Array yi = ji(x), yc = jc(x);
    std::vector<Variant> vs;
    vs.push_back({"jit interpreter (fused)", [&] { Array y = ji(x); }, {}});
    vs.push_back({"jit cpu (generated C++)", [&] { Array y = jc(x); }, {}});
    vs.push_back({"vector loop (the reference)", [&] { ch.loop(xs.data(), out.data(), n); }, {}});
    std::printf("\nchain: y = %s, x in [-4, 4)\n", ch.title);
    std::vector<double> m = table(vs);
    goals(m[1], m[0]);
    agree("jit cpu", yc, out);
    agree("jit interpreter", yi, out);
  }
  if (!all_agree) std::printf("\nFAIL: graft and the vector loop disagree beyond 1e-5\n");
  return all_agree ? 0 : 1;
}
