// mixed_precision: training a small MLP with bf16 matmuls and f32 master
// weights, as JAX programs do with jnp.bfloat16: the parameters stay f32,
// each step casts them and the batch to bf16, multiplies and activates in
// bf16 (graft computes each bf16 op in f32 and rounds, as JAX's CPU backend;
// matrix products accumulate in f32), and computes the loss in f32. The
// gradient flows back through the casts to the f32 weights, which SGD
// updates in f32.
//
// The example checks what it relies on and exits non-zero otherwise:
//   - one bf16 forward pass agrees with the f32 one within bf16's precision
//     (relative 2^-8 per rounding, a few roundings deep);
//   - the bf16 gradient points the f32 gradient's way (cosine > 0.99);
//   - after 300 steps from the same start, the mixed-precision loss is
//     within 5 % of the f32 run's, and both fell by more than 10x.
//
//   ./build/examples/mixed_precision
#include <cmath>
#include <cstdio>
#include <vector>

#include "graft/graft.h"

using namespace graft;

namespace {

struct Params {
  Array w1, b1, w2, b2;
};

// The network in `compute` precision (f32 or bf16), its loss in f32.
Array loss(const std::vector<Array>& p, const Array& x, const Array& y, DType compute) {
  auto c = [compute](const Array& a) { return astype(a, compute); };
  const Array h = tanh(matmul(c(x), c(p[0])) + c(p[1]));
  const Array out = matmul(h, c(p[2])) + c(p[3]);
  const Array d = astype(out, f32) - y;
  return mean(d * d);
}

double cosine(const std::vector<Array>& a, const std::vector<Array>& b) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    ab += sum(a[i] * b[i]).item<double>();
    aa += sum(a[i] * a[i]).item<double>();
    bb += sum(b[i] * b[i]).item<double>();
  }
  return ab / std::sqrt(aa * bb);
}

}  // namespace

int main() {
  // A smooth target on 8 inputs: y = sin(x . v) + (x . u)^2 / 4.
  const auto keys = random::split(random::key(0), 6);
  const Array x = random::normal(keys[0], {256, 8});
  const Array v = random::normal(keys[1], {8, 1}) * 0.5, u = random::normal(keys[2], {8, 1}) * 0.3;
  const Array y = sin(matmul(x, v)) + square(matmul(x, u)) * 0.25;
  const std::vector<Array> init = {random::normal(keys[3], {8, 64}) * (1 / std::sqrt(8.0)), zeros({64}),
                                   random::normal(keys[4], {64, 1}) * (1 / std::sqrt(64.0)), zeros({1})};

  // 1. One forward pass and gradient in both precisions.
  const double l32 = loss(init, x, y, f32).item<double>(), l16 = loss(init, x, y, bf16).item<double>();
  const double forward_err = std::abs(l16 - l32) / l32;
  std::printf("initial loss: f32 %.6f, bf16 %.6f (relative %.2e)\n", l32, l16, forward_err);
  auto grad_in = [&](DType d) { return grad([&, d](const std::vector<Array>& p) { return loss(p, x, y, d); })(init); };
  const std::vector<Array> g32 = grad_in(f32), g16 = grad_in(bf16);
  for (const Array& g : g16)
    if (g.dtype() != f32) return std::printf("mixed_precision: FAILED (grad dtype)\n"), 1;
  const double cos = cosine(g32, g16);
  std::printf("gradient cosine (bf16 vs f32): %.6f\n", cos);

  // 2. 300 SGD steps each, jitted.
  auto train = [&](DType d) {
    auto step = jit([d, &x, &y](const std::vector<Array>& p) {
      const std::vector<Array> g = grad([&, d](const std::vector<Array>& q) { return loss(q, x, y, d); })(p);
      std::vector<Array> next;
      for (size_t i = 0; i < p.size(); ++i) next.push_back(p[i] - 0.1 * g[i]);
      return next;
    });
    std::vector<Array> p = init;
    for (int s = 0; s < 300; ++s) p = step(p);
    return loss(p, x, y, f32).item<double>();
  };
  const double final32 = train(f32), final16 = train(bf16);
  const double train_err = std::abs(final16 - final32) / final32;
  std::printf("after 300 steps: f32 weights %.6f, bf16 compute %.6f (relative %.2e)\n", final32, final16, train_err);

  const bool ok = forward_err < 0.02 && cos > 0.99 && train_err < 0.05 && final32 < l32 / 10 && final16 < l32 / 10;
  std::printf("mixed_precision: %s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
