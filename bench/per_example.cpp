// bench/per_example: per-example gradients of an MLP 64-64-10 (tanh, softmax
// cross-entropy), batch 128, three ways in one run:
//   vmap(grad(loss))       one batched pass over the batch
//   loop of grad(loss)     128 single-example passes
//   grad(mean loss)        the batch's one averaged gradient (a lower bound)
// Goal (issue 5): vmap >= 20x faster than the loop.
#include <cstdio>

#include "graft/graft.h"
#include "timing.h"

using namespace graft;

struct Mlp {
  Array w1, b1, w2, b2;
};
GRAFT_PYTREE(Mlp, w1, b1, w2, b2);

Array loss(const Mlp& p, const Array& x, const Array& y) {  // one example: x [64], y one-hot [10]
  Array h = graft::tanh(matmul(x, p.w1) + p.b1);
  return -sum(log_softmax(matmul(h, p.w2) + p.b2) * y);
}

Array batch_loss(const Mlp& p, const Array& xs, const Array& ys) {  // xs [B, 64], ys [B, 10]
  Array h = graft::tanh(matmul(xs, p.w1) + p.b1);
  return -mean(sum(log_softmax(matmul(h, p.w2) + p.b2) * ys, {1}));
}

int main() {
  const int64_t in = 64, hidden = 64, out = 10, batch = 128;
  std::vector<Array> k = random::split(random::key(1), 4);
  Mlp p{random::normal(k[0], {in, hidden}) * 0.2, zeros({hidden}), random::normal(k[1], {hidden, out}) * 0.2,
        zeros({out})};
  Array xs = random::normal(k[2], {batch, in});
  Array ys = one_hot(random::randint(k[3], {batch}, 0, out), out);

  auto per_example = vmap(grad(loss), Axes{none, 0, 0});
  auto one = grad(loss);
  auto whole = grad(batch_loss);
  std::vector<Array> rows, labels;
  for (int64_t i = 0; i < batch; ++i) {
    rows.push_back(xs[i]);
    labels.push_back(ys[i]);
  }
  // Warm up (traces once per wrapper) and check the two agree.
  Mlp gv = per_example(p, xs, ys);
  Mlp g0 = one(p, rows[5], labels[5]);
  double diff = max(abs(gv.w1[5] - g0.w1)).item<double>();

  double t_vmap = best_seconds([&] { per_example(p, xs, ys); }, 20);
  double t_loop = best_seconds(
      [&] {
        for (int64_t i = 0; i < batch; ++i) one(p, rows[i], labels[i]);
      },
      5);
  double t_mean = best_seconds([&] { whole(p, xs, ys); }, 20);

  std::printf("per-example gradients, MLP %lld-%lld-%lld, batch %lld (max |vmap - loop| on w1 of example 5: %.1e)\n",
              static_cast<long long>(in), static_cast<long long>(hidden), static_cast<long long>(out),
              static_cast<long long>(batch), diff);
  std::printf("%-28s %10s %12s\n", "", "ms/batch", "vs vmap");
  std::printf("%-28s %10.3f %11.2fx\n", "vmap(grad(loss))", t_vmap * 1e3, 1.0);
  std::printf("%-28s %10.3f %11.2fx\n", "loop of 128 grad(loss)", t_loop * 1e3, t_loop / t_vmap);
  std::printf("%-28s %10.3f %11.2fx\n", "grad(mean loss), one grad", t_mean * 1e3, t_mean / t_vmap);
  std::printf("vmap is %.1fx faster than the loop (goal >= 20x)\n", t_loop / t_vmap);
  return 0;
}
