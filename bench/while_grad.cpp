// Reverse mode through while_loop (which JAX refuses): jit(grad) of an RNN
// run for N steps by a while_loop whose trip count is a run-time value,
// beside the same RNN as a scan of static length N (graft's, and JAX's
// lax.scan, the strongest reference: JAX has no reverse mode for while).
//
//   ./build/bench/while_grad [--python /path/to/venv/bin/python] [--repeats 9]
//
// The while's backward pass counts the trips and sweeps back on the binomial
// schedule (128 carries whatever N): up to N = 129 it runs each step
// forward once more than the scan (which stores every carry: memory O(N)),
// up to 8385 at most twice more.
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "graft/graft.h"
#include "python_peer.h"
#include "timing.h"

using namespace graft;

namespace {

constexpr int kWidth = 256, kBatch = 32;

std::map<int, double> jax_scan_ms(const std::string& python, const std::vector<int>& lengths, int repeats) {
  std::map<int, double> out;
  if (python.empty()) return out;
  std::string ns;
  for (int n : lengths) ns += std::to_string(n) + ",";
  const std::string script = std::string("import time, numpy as np, jax, jax.numpy as jnp\n") + kPythonSpread +
                             "D, B = " + std::to_string(kWidth) + ", " + std::to_string(kBatch) +
                             "\n"
                             "k = jax.random.split(jax.random.key(0), 2)\n"
                             "W = jax.random.normal(k[0], (D, D)) / np.sqrt(D); x = jax.random.normal(k[1], (B, D))\n"
                             "for n in [" +
                             ns +
                             "]:\n"
                             "  def loss(w, x0):\n"
                             "    h, _ = jax.lax.scan(lambda c, _: (jnp.tanh(c @ w + x0), None), x0, None, length=n)\n"
                             "    return jnp.sum(h * h)\n"
                             "  f = jax.jit(jax.grad(loss)); jax.block_until_ready(f(W, x))\n"
                             "  s = spread(lambda: jax.block_until_ready(f(W, x)), " +
                             std::to_string(repeats) +
                             ")\n"
                             "  print(n, s[1] * 1e3)\n";
  for (const std::string& line : python_output_lines(python, "/tmp/graft_bench_while_grad.py", script)) {
    int n;
    double ms;
    if (std::sscanf(line.c_str(), "%d %lf", &n, &ms) == 2) out[n] = ms;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const auto [python, repeats] = parse_peer_args(argc, argv, 9);
  const std::vector<int> lengths = {16, 256, 2048};
  const auto keys = random::split(random::key(0), 2);
  Array W = random::normal(keys[0], {kWidth, kWidth}) * static_cast<float>(1.0 / std::sqrt(double{kWidth}));
  Array x = random::normal(keys[1], {kBatch, kWidth});
  const auto jax = jax_scan_ms(python, lengths, repeats);
  std::printf("jit(grad) of an RNN (h <- tanh(h W + x), %dx%d, batch %d, f32) over N steps; ms median (min-max)\n",
              kWidth, kWidth, kBatch);
  std::printf("%6s %22s %22s %10s %10s %10s %18s\n", "N", "graft while_loop", "graft scan", "jax scan", "while/scan",
              "while/jax", "temp MiB while|scan");
  for (int n : lengths) {
    auto by_while = [n](const Array& w, const Array& x0) {
      auto out = while_loop([n](const auto& s) { return s.first < n; },
                            [&](const auto& s) { return std::make_pair(s.first + 1, tanh(matmul(s.second, w) + x0)); },
                            std::make_pair(scalar(0, DType::i32), x0));
      return sum(out.second * out.second);
    };
    auto by_scan = [n](const Array& w, const Array& x0) {
      Array h = fori_loop(
          0, n, [&](const Array&, const Array& c) { return tanh(matmul(c, w) + x0); }, x0);
      return sum(h * h);
    };
    auto gw = jit(grad(by_while), JitOptions{.wait_for_compile = true});
    auto gs = jit(grad(by_scan), JitOptions{.wait_for_compile = true});
    std::vector<float> a = gw(W, x).to_vector<float>(), b = gs(W, x).to_vector<float>();
    const double mib_w = static_cast<double>(gw.lower(W, x).compile().memory_analysis().temp_bytes) / (1 << 20);
    const double mib_s = static_cast<double>(gs.lower(W, x).compile().memory_analysis().temp_bytes) / (1 << 20);
    double diff = 0;
    for (size_t i = 0; i < a.size(); ++i) diff = std::max(diff, static_cast<double>(std::fabs(a[i] - b[i])));
    std::vector<double> tw, ts;
    for (int r = 0; r < repeats; ++r) {  // interleaved, so both see the same machine state
      tw.push_back(seconds_of([&] { (void)gw(W, x).to_vector<float>(); }));
      ts.push_back(seconds_of([&] { (void)gs(W, x).to_vector<float>(); }));
    }
    const TimeSpread w = spread_of(tw), s = spread_of(ts);
    char wcol[64], scol[64], jcol[32] = "-", ratio[32] = "-";
    std::snprintf(wcol, sizeof wcol, "%.2f (%.2f-%.2f)", w.median * 1e3, w.min * 1e3, w.max * 1e3);
    std::snprintf(scol, sizeof scol, "%.2f (%.2f-%.2f)", s.median * 1e3, s.min * 1e3, s.max * 1e3);
    if (auto j = jax.find(n); j != jax.end()) {
      std::snprintf(jcol, sizeof jcol, "%.2f", j->second);
      std::snprintf(ratio, sizeof ratio, "%.2fx", w.median * 1e3 / j->second);
    }
    std::printf("%6d %22s %22s %10s %9.2fx %10s %8.1f|%-8.1f (gradients differ by %.1e)\n", n, wcol, scol, jcol,
                w.median / s.median, ratio, mib_w, mib_s, diff);
    std::fflush(stdout);
  }
  return 0;
}
