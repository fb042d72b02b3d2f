// The gradient of a net whose layers are slices of one stacked array, as JAX
// users write it (Ws[i] of one [L, D, D] array, each block checkpointed),
// beside the same net over a std::vector of layers, and beside JAX.
//
//   ./build/bench/stacked_layers [--python /path/to/venv/bin/python] [--repeats 9]
//
// Each slice's cotangent is a zero-padded [L, D, D] array; graft's simplifier
// writes them into one buffer (dynamic_update_slice, in place) instead of
// summing L full-size pads (which made the stacked form O(L^2)).
// Goal: the stacked form within 1.2x of the vector form.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "graft/graft.h"
#include "python_peer.h"
#include "timing.h"

using namespace graft;

int main(int argc, char** argv) {
  const auto [python, repeats] = parse_peer_args(argc, argv, 9);
  const int L = 64, D = 128, B = 32;
  Array Ws = random::normal(random::key(0), {L, D, D}) * static_cast<float>(0.5 / std::sqrt(static_cast<double>(D)));
  std::vector<Array> Wv;
  for (int i = 0; i < L; ++i) Wv.push_back(Ws[i]);
  Array x = random::normal(random::key(1), {B, D});
  auto block = checkpoint([](const Array& h, const Array& W) { return h + tanh(matmul(h, W)); });
  auto stacked = [&](const Array& W, const Array& xb) {
    Array h = xb;
    for (int i = 0; i < L; ++i) h = block(h, W[i]);
    return mean(square(h));
  };
  auto vec = [&](const std::vector<Array>& W, const Array& xb) {
    Array h = xb;
    for (int i = 0; i < L; ++i) h = block(h, W[i]);
    return mean(square(h));
  };
  auto gs = jit(value_and_grad(stacked), JitOptions{.wait_for_compile = true});
  auto gv = jit(value_and_grad(vec), JitOptions{.wait_for_compile = true});
  // Warm both, and check they agree.
  auto rs = gs(Ws, x);
  auto rv = gv(Wv, x);
  double max_diff = 0;
  for (int i = 0; i < L; ++i) {
    std::vector<float> a = rs.second[i].to_vector<float>(), b = rv.second[static_cast<size_t>(i)].to_vector<float>();
    for (size_t k = 0; k < a.size(); ++k) max_diff = std::max(max_diff, static_cast<double>(std::fabs(a[k] - b[k])));
  }
  // Interleaved rounds, so both forms see the same machine state.
  std::vector<double> ts, tv;
  for (int r = 0; r < repeats; ++r) {
    ts.push_back(seconds_of([&] { auto out = gs(Ws, x); (void)out.second.to_vector<float>(); }));
    tv.push_back(seconds_of([&] { auto out = gv(Wv, x); (void)out.second[0].to_vector<float>(); }));
  }
  const TimeSpread s = spread_of(ts), v = spread_of(tv);
  std::printf("jit(value_and_grad) of a %d-layer residual net (D=%d, batch %d, checkpointed blocks); ms min/median/max\n", L,
              D, B);
  std::printf("%-34s %8.2f %8.2f %8.2f\n", "graft, Ws[i] of one stacked array", s.min * 1e3, s.median * 1e3, s.max * 1e3);
  std::printf("%-34s %8.2f %8.2f %8.2f\n", "graft, std::vector of layers", v.min * 1e3, v.median * 1e3, v.max * 1e3);
  std::printf("stacked / vector (medians): %.2fx (goal <= 1.2x); gradients differ by at most %.2e\n", s.median / v.median,
              max_diff);
  std::fflush(stdout);
  if (!python.empty()) {
    const std::string script =
        "import time, numpy as np, jax, jax.numpy as jnp\n"
        "L, D, B = " + std::to_string(L) + ", " + std::to_string(D) + ", " + std::to_string(B) + "\n"
        "Ws = jax.random.normal(jax.random.key(0), (L, D, D)) * (0.5 / np.sqrt(D)); x = jax.random.normal(jax.random.key(1), (B, D))\n"
        "block = jax.checkpoint(lambda h, W: h + jnp.tanh(h @ W))\n"
        "def loss(W, xb):\n"
        "  h = xb\n"
        "  for i in range(L): h = block(h, W[i])\n"
        "  return jnp.mean(h * h)\n"
        "f = jax.jit(jax.value_and_grad(loss)); jax.block_until_ready(f(Ws, x))\n"
        "t = []\n"
        "for _ in range(" + std::to_string(repeats) + "):\n"
        "  t0 = time.perf_counter(); jax.block_until_ready(f(Ws, x)); t.append(time.perf_counter() - t0)\n"
        "t.sort(); print('%-34s %8.2f %8.2f %8.2f' % ('jax, Ws[i] of one stacked array', t[0]*1e3, t[len(t)//2]*1e3, t[-1]*1e3))\n";
    run_python_script(python, "/tmp/graft_bench_stacked.py", script);
  }
  return 0;
}
