// train_digits: a two-layer MLP learns scikit-learn's 8x8 handwritten digits
// (1797 images, 10 classes) and prints its accuracy on images it never saw.
//
// What it shows: a training step written as plain C++ (the loss with
// value_and_grad, Adam with tree::map over a struct of parameters), jitted
// once, with the parameters and optimiser state donated so each step updates
// them in place instead of allocating new buffers.
//
// The data set is the CSV that Debian's python3-sklearn ships (examples/digits.h):
//   ./build/examples/train_digits [digits.csv.gz] [epochs]
// Exit status 1 if the test accuracy is below 95 %.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "digits.h"
#include "graft/graft.h"

using namespace graft;

// Pytrees are registered at global scope.
struct Params {
  Array w1, b1, w2, b2;
};
GRAFT_PYTREE(Params, w1, b1, w2, b2);

// Adam's state: the moving averages of the gradient and of its square, and the step count.
struct Adam {
  Params m, v;
  Array t;
};
GRAFT_PYTREE(Adam, m, v, t);

namespace {

constexpr int kHidden = 128, kClasses = 10, kBatch = 64;

Params init_params(uint64_t seed) {
  std::vector<Array> k = random::split(random::key(seed), 2);
  // Glorot-style scales: each layer's output starts with unit-ish variance.
  return Params{random::normal(k[0], {kPixels, kHidden}) * (1.0f / std::sqrt(float(kPixels))), zeros({kHidden}),
                random::normal(k[1], {kHidden, kClasses}) * (1.0f / std::sqrt(float(kHidden))), zeros({kClasses})};
}

Array logits(const Params& p, const Array& x) { return matmul(tanh(matmul(x, p.w1) + p.b1), p.w2) + p.b2; }

// Mean cross-entropy of the softmax over the classes.
Array loss(const Params& p, const Array& x, const Array& y) {
  return -mean(sum(log_softmax(logits(p, x)) * one_hot(y, kClasses), {1}));
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : kDefaultData;
  const int epochs = argc > 2 ? std::atoi(argv[2]) : 30;
  std::mt19937_64 rng(7);
  DigitsSplit split;
  if (!load_split("train_digits", path, rng, &split)) return 2;
  const Digits& data = split.data;
  const std::vector<int64_t>& train_rows = split.train_rows;
  const std::vector<int64_t>& test_rows = split.test_rows;
  const auto [x_test, y_test] = gather_rows(data, test_rows);

  // One training step: loss and gradient, then Adam. Parameters and optimiser
  // state are donated: the step writes their new values into their buffers.
  const float lr = 3e-3f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;
  auto step = jit(
      [&](const Params& p, const Adam& s, const Array& x, const Array& y) {
        auto [value, g] = value_and_grad(loss)(p, x, y);
        const Array t = s.t + 1.0f;
        const Params m = tree::map([&](const Array& m, const Array& g) { return m * beta1 + g * (1 - beta1); }, s.m, g);
        const Params v =
            tree::map([&](const Array& v, const Array& g) { return v * beta2 + square(g) * (1 - beta2); }, s.v, g);
        // Bias corrections for the averages' start at zero.
        const Array c1 = 1.0f - exp(t * std::log(beta1)), c2 = 1.0f - exp(t * std::log(beta2));
        const Params next = tree::map(
            [&](const Array& w, const Array& m, const Array& v) { return w - (m / c1) * lr / (sqrt(v / c2) + eps); }, p,
            m, v);
        return std::make_tuple(next, Adam{m, v, t}, value);
      },
      JitOptions{.donate_argnums = {0, 1}});
  auto accuracy = jit([](const Params& p, const Array& x, const Array& y) {
    return mean(astype(argmax(logits(p, x), 1) == y, DType::f32));
  });

  Params params = init_params(0);
  auto zero = [](const Array& w) { return zeros(w.shape(), w.dtype()); };
  Adam adam{tree::map(zero, params), tree::map(zero, params), zeros({})};
  const size_t batches = train_rows.size() / kBatch;  // the remainder waits for the next shuffle
  std::vector<int64_t> rows = train_rows;
  for (int epoch = 1; epoch <= epochs; ++epoch) {
    std::shuffle(rows.begin(), rows.end(), rng);
    double total = 0;
    for (size_t b = 0; b < batches; ++b) {
      const auto [x, y] = gather_rows(data, std::vector<int64_t>(rows.begin() + static_cast<int64_t>(b * kBatch),
                                                                 rows.begin() + static_cast<int64_t>((b + 1) * kBatch)));
      Array value;
      std::tie(params, adam, value) = step(params, adam, x, y);
      total += value.item<float>();
    }
    if (epoch == 1 || epoch % 5 == 0 || epoch == epochs)
      std::printf("epoch %2d  loss %.4f  test accuracy %.1f %%\n", epoch, total / static_cast<double>(batches),
                  100.0 * accuracy(params, x_test, y_test).item<float>());
  }
  // What donation saved: the outputs of a step written into its arguments' buffers.
  const auto [x0, y0] = gather_rows(data, std::vector<int64_t>(rows.begin(), rows.begin() + kBatch));
  const MemoryAnalysis memory = step.lower(params, adam, x0, y0).compile().memory_analysis();
  std::printf("each step writes %lld of its %lld output bytes into the donated parameters and Adam state\n",
              static_cast<long long>(memory.alias_bytes), static_cast<long long>(memory.output_bytes));
  const float acc = accuracy(params, x_test, y_test).item<float>();
  std::printf("test accuracy %.1f %% on %zu images never trained on%s\n", 100.0 * acc, test_rows.size(),
              acc >= 0.95f ? "" : " (below 95 %: WRONG RESULT)");
  return acc >= 0.95f ? 0 : 1;
}
