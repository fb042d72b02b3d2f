// cnn_digits: a small convolutional network learns scikit-learn's 8x8
// handwritten digits (1797 images, 10 classes) and prints its accuracy on
// images it never saw.
//
// What it shows: graft's convolutions and pooling as a JAX/flax user writes
// them: NHWC images, HWIO kernels, conv_general_dilated with "SAME" padding,
// relu, nn::max_pool, a global average pool and a dense layer; the loss's
// gradient through all of them (the convolutions' transposes and max
// pooling's select-and-scatter) and Adam, in one jitted step.
//
//   ./build/examples/cnn_digits [digits.csv.gz] [epochs]
// Exit status 1 if the test accuracy is below 98 %.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "digits.h"
#include "graft/graft.h"

using namespace graft;

// conv 3x3 (1 -> 32), relu, max pool 2x2; conv 3x3 (32 -> 64), relu; global
// average pool; dense (64 -> 10).
struct Params {
  Array k1, b1, k2, b2, w, b;
};
GRAFT_PYTREE(Params, k1, b1, k2, b2, w, b);

struct Adam {
  Params m, v;
  Array t;
};
GRAFT_PYTREE(Adam, m, v, t);

namespace {

constexpr int kClasses = 10, kBatch = 64;

Params init_params(uint64_t seed) {
  std::vector<Array> k = random::split(random::key(seed), 3);
  const auto he = nn::initializers::he_normal();  // fan-in over the kernel's window and input features, as flax
  return Params{he(k[0], {3, 3, 1, 32}, DType::f32),
                zeros({32}),
                he(k[1], {3, 3, 32, 64}, DType::f32),
                zeros({64}),
                nn::initializers::lecun_normal()(k[2], {64, kClasses}, DType::f32),
                zeros({kClasses})};
}

Array logits(const Params& p, const Array& pixels) {
  const ConvDimensionNumbers nhwc{"NHWC", "HWIO", "NHWC"};
  const Array x = reshape(pixels, {pixels.shape()[0], 8, 8, 1});
  Array h = nn::relu(conv_general_dilated(x, p.k1, {1, 1}, "SAME", {}, {}, nhwc) + p.b1);
  h = nn::max_pool(h, {2, 2}, {2, 2});  // 8x8 -> 4x4
  h = nn::relu(conv_general_dilated(h, p.k2, {1, 1}, "SAME", {}, {}, nhwc) + p.b2);
  return matmul(mean(h, {1, 2}), p.w) + p.b;  // global average pool, then dense
}

Array loss(const Params& p, const Array& x, const Array& y) {
  return -mean(sum(log_softmax(logits(p, x)) * one_hot(y, kClasses), {1}));
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : kDefaultData;
  const int epochs = argc > 2 ? std::atoi(argv[2]) : 60;
  std::mt19937_64 rng(7);
  DigitsSplit split;
  if (!load_split("cnn_digits", path, rng, &split)) return 2;
  const Digits& data = split.data;
  const std::vector<int64_t>& train_rows = split.train_rows;
  const std::vector<int64_t>& test_rows = split.test_rows;
  const auto [x_test, y_test] = gather_rows(data, test_rows);

  const float lr = 5e-3f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;
  auto step = jit(
      [&](const Params& p, const Adam& s, const Array& x, const Array& y) {
        auto [value, g] = value_and_grad(loss)(p, x, y);
        const Array t = s.t + 1.0f;
        const Params m = tree::map([&](const Array& m, const Array& g) { return m * beta1 + g * (1 - beta1); }, s.m, g);
        const Params v =
            tree::map([&](const Array& v, const Array& g) { return v * beta2 + square(g) * (1 - beta2); }, s.v, g);
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
  const size_t batches = train_rows.size() / kBatch;
  std::vector<int64_t> rows = train_rows;
  for (int epoch = 1; epoch <= epochs; ++epoch) {
    std::shuffle(rows.begin(), rows.end(), rng);
    double total = 0;
    for (size_t b = 0; b < batches; ++b) {
      const auto [x, y] =
          gather_rows(data, std::vector<int64_t>(rows.begin() + static_cast<int64_t>(b * kBatch),
                                                 rows.begin() + static_cast<int64_t>((b + 1) * kBatch)));
      Array value;
      std::tie(params, adam, value) = step(params, adam, x, y);
      total += value.item<float>();
    }
    if (epoch == 1 || epoch % 10 == 0 || epoch == epochs)
      std::printf("epoch %2d  loss %.4f  test accuracy %.1f %%\n", epoch, total / static_cast<double>(batches),
                  100.0 * accuracy(params, x_test, y_test).item<float>());
  }
  const float acc = accuracy(params, x_test, y_test).item<float>();
  std::printf("test accuracy %.1f %% on %zu images never trained on%s\n", 100.0 * acc, test_rows.size(),
              acc >= 0.98f ? "" : " (below 98 %: WRONG RESULT)");
  return acc >= 0.98f ? 0 : 1;
}
