// per_example_grads: DP-SGD-style gradient clipping. vmap(grad(loss)) gives
// every example's gradient in one batched pass; each is clipped to a norm
// bound and the clipped gradients are averaged. A loop of single-example
// grads computes the same thing, one example at a time, for comparison.
//
//   ./build/examples/per_example_grads
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "graft/graft.h"

using namespace graft;

struct Mlp {
  Array w1, b1, w2, b2;
};
GRAFT_PYTREE(Mlp, w1, b1, w2, b2);

// Softmax cross-entropy of one example (x: [in], label: i32[]).
Array loss(const Mlp& p, const Array& x, const Array& label) {
  Array h = graft::tanh(matmul(x, p.w1) + p.b1);
  Array logits = matmul(h, p.w2) + p.b2;
  return -sum(log_softmax(logits) * one_hot(label, p.b2.size()));
}

// The gradient's global L2 norm, over every leaf of the parameter tree.
Array global_norm(const Mlp& g, const std::vector<int>& per_leaf_axes = {}) {
  Array total = scalar(0.0);
  for (const Array& leaf : tree::leaves(g)) total = total + sum(square(leaf), per_leaf_axes);
  return sqrt(total);
}

int main() {
  const int64_t in = 16, hidden = 32, out = 4, batch = 64;
  const double clip = 8.0;
  std::vector<Array> keys = random::split(random::key(0), 4);
  const Array &k1 = keys[0], &k2 = keys[1], &k3 = keys[2], &k4 = keys[3];
  Mlp params{random::normal(k1, {in, hidden}) * 0.4, zeros({hidden}), random::normal(k2, {hidden, out}) * 0.4,
             zeros({out})};
  Array xs = random::normal(k3, {batch, in});
  Array labels = random::randint(k4, {batch}, 0, out);

  // One batched pass: a tree of [batch, ...] gradients.
  auto per_example = vmap(grad(loss), Axes{none, 0, 0});
  Mlp grads = per_example(params, xs, labels);
  // Per-example norms: sum each leaf over every axis but the batch axis.
  Array norms = zeros({batch});
  for (const Array& leaf : tree::leaves(grads)) {
    std::vector<int> axes;
    for (int d = 1; d < leaf.ndim(); ++d) axes.push_back(d);
    norms = norms + sum(square(leaf), axes);
  }
  norms = sqrt(norms);
  Array scale = minimum(full({batch}, clip) / (norms + 1e-12), ones({batch}));
  Mlp clipped = tree::map(
      [&](const Array& g) {
        Shape s(static_cast<size_t>(g.ndim()), 1);
        s[0] = batch;
        return mean(g * reshape(scale, s), {0});
      },
      grads);

  // The same with a loop of single-example gradients.
  auto one = grad(loss);
  std::vector<double> loop_norms;
  Mlp summed = tree::map([](const Array& p) { return zeros(p.shape()); }, params);
  for (int64_t i = 0; i < batch; ++i) {
    Mlp g = one(params, xs[i], labels[i]);
    double n = global_norm(g).item<double>();
    loop_norms.push_back(n);
    double s = std::min(1.0, clip / (n + 1e-12));
    summed = tree::map([&](const Array& acc, const Array& gi) { return acc + gi * s; }, summed, g);
  }
  Mlp loop_clipped = tree::map([&](const Array& acc) { return acc / static_cast<double>(batch); }, summed);

  double worst_norm = 0, worst_grad = 0;
  std::vector<double> vn = norms.to_vector<double>();
  for (int64_t i = 0; i < batch; ++i) worst_norm = std::max(worst_norm, std::abs(vn[i] - loop_norms[i]));
  std::vector<Array> a = tree::leaves(clipped), b = tree::leaves(loop_clipped);
  for (size_t k = 0; k < a.size(); ++k) worst_grad = std::max(worst_grad, max(abs(a[k] - b[k])).item<double>());
  int clipped_count = 0;
  for (double n : vn) clipped_count += n > clip;

  std::printf("per-example gradient norms (first 6):");
  for (int i = 0; i < 6; ++i) std::printf(" %.3f", vn[i]);
  std::printf("\n%d of %lld examples clipped to norm %.1f\n", clipped_count, static_cast<long long>(batch), clip);
  std::printf("(bench/per_example times the two ways)\n");
  std::printf("max |vmap - loop|: norms %.2e, clipped mean gradient %.2e\n", worst_norm, worst_grad);
  return worst_norm < 1e-4 && worst_grad < 1e-5 ? 0 : 1;
}
