// Shape-polymorphic jit: an MNIST-sized MLP's SGD step over batch sizes,
// one polymorphic executable ("(b, 784)") beside shape-specialised jit (one
// executable per size) and beside JAX (jax.jit compiles per shape).
//
//   ./build/bench/polymorphic_jit [--python /path/to/venv/bin/python] [--repeats 9]
//
// Rows: the time of one step at several sizes, polymorphic / specialised
// (goal <= 1.1x) and JAX's; then a training loop over every batch size
// 1..1024 (one step each): how often each traces and compiles, and its
// wall time (graft polymorphic, graft specialised on a sample of sizes,
// scaled; JAX over every size). Last, a sequence model's step with a
// second symbol on an inner axis ("(b, t, 64)": attention pooling over t),
// polymorphic / specialised at several (b, t).
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "graft/graft.h"
#include "python_peer.h"
#include "timing.h"

using namespace graft;

namespace {

constexpr int64_t kIn = 784, kHidden = 512, kOut = 10, kMaxBatch = 1024;

struct Params {
  Array w1, b1, w2, b2;
};

// A sequence classifier: tokens (b, t, 64) through a tanh layer, pooled over t
// by a softmax of scores (attention pooling), then a linear read-out.
struct SeqParams {
  Array w1, b1, q, w2;
};

}  // namespace

GRAFT_PYTREE(Params, w1, b1, w2, b2);
GRAFT_PYTREE(SeqParams, w1, b1, q, w2);

namespace {

Array loss(const Params& p, const Array& x, const Array& y) {
  Array h = nn::relu(matmul(x, p.w1) + p.b1);
  Array logits = matmul(h, p.w2) + p.b2;
  return -mean(sum(log_softmax(logits, {-1}) * y, {1}));
}

std::pair<Params, Array> sgd_step(const Params& p, const Array& x, const Array& y) {
  auto [l, g] = value_and_grad(loss)(p, x, y);
  const float lr = 0.01f;
  return {Params{p.w1 - lr * g.w1, p.b1 - lr * g.b1, p.w2 - lr * g.w2, p.b2 - lr * g.b2}, l};
}

const std::vector<int64_t> kSizes = {1, 7, 32, 100, 128, 256, 500, 1024};

constexpr int64_t kSeqIn = 64, kSeqHidden = 128;

Array seq_loss(const SeqParams& p, const Array& x, const Array& y) {
  Array h = tanh(matmul(x, p.w1) + p.b1);          // (b, t, H)
  Array a = softmax(sum(h * p.q, {2}), {1});       // (b, t): weights over t
  Array pooled = sum(h * expand_dims(a, 2), {1});  // (b, H)
  return -mean(sum(log_softmax(matmul(pooled, p.w2), {-1}) * y, {1}));
}

std::pair<SeqParams, Array> seq_step(const SeqParams& p, const Array& x, const Array& y) {
  auto [l, g] = value_and_grad(seq_loss)(p, x, y);
  const float lr = 0.01f;
  return {SeqParams{p.w1 - lr * g.w1, p.b1 - lr * g.b1, p.q - lr * g.q, p.w2 - lr * g.w2}, l};
}

// JAX: "ms <b> <median>" per size, then "loop <seconds>" for one step at every size 1..1024.
std::map<std::string, double> run_jax(const std::string& python, int repeats) {
  std::map<std::string, double> out;
  if (python.empty()) return out;
  std::string sizes;
  for (int64_t b : kSizes) sizes += std::to_string(b) + ",";
  const std::string script =
      std::string("import time, numpy as np, jax, jax.numpy as jnp\n") + kPythonSpread +
      "I, H, O, M = " + std::to_string(kIn) + ", " + std::to_string(kHidden) + ", " + std::to_string(kOut) + ", " +
      std::to_string(kMaxBatch) +
      "\n"
      "k = jax.random.split(jax.random.key(0), 4)\n"
      "p = (jax.random.normal(k[0], (I, H)) / np.sqrt(I), jnp.zeros(H), jax.random.normal(k[1], (H, O)) / "
      "np.sqrt(H), jnp.zeros(O))\n"
      "X = jax.random.normal(k[2], (M, I)); Y = jax.nn.one_hot(jax.random.randint(k[3], (M,), 0, O), O)\n"
      "def loss(p, x, y):\n"
      "  h = jax.nn.relu(x @ p[0] + p[1]); z = h @ p[2] + p[3]\n"
      "  return -jnp.mean(jnp.sum(jax.nn.log_softmax(z, -1) * y, 1))\n"
      "@jax.jit\n"
      "def step(p, x, y):\n"
      "  l, g = jax.value_and_grad(loss)(p, x, y)\n"
      "  return tuple(a - 0.01 * b for a, b in zip(p, g)), l\n"
      "for b in [" +
      sizes +
      "]:\n"
      "  x, y = X[:b], Y[:b]\n"
      "  jax.block_until_ready(step(p, x, y))\n"
      "  s = spread(lambda: jax.block_until_ready(step(p, x, y)), " +
      std::to_string(repeats) +
      ")\n"
      "  print('ms', b, s[1] * 1e3)\n"
      "step2 = jax.jit(step.__wrapped__)\n"
      "xs = [np.asarray(X[:b]) for b in range(1, M + 1)]; ys = [np.asarray(Y[:b]) for b in range(1, M + 1)]\n"
      "t0 = time.perf_counter(); q = p\n"
      "for b in range(1, M + 1): q, l = step2(q, xs[b - 1], ys[b - 1])\n"
      "jax.block_until_ready(q)\n"
      "print('loop', 0, time.perf_counter() - t0)\n";
  for (const std::string& line : python_output_lines(python, "/tmp/graft_bench_polymorphic_jit.py", script)) {
    char kind[16];
    long long b;
    double v;
    if (std::sscanf(line.c_str(), "%15s %lld %lf", kind, &b, &v) == 3) out[std::string(kind) + std::to_string(b)] = v;
  }
  return out;
}

// The spreads of `repeats` calls of a and of b after one warm call each,
// interleaved so that the machine's drift falls on both alike.
template <class A, class B>
std::pair<TimeSpread, TimeSpread> interleaved(int repeats, const A& a, const B& b) {
  a();
  b();
  std::vector<double> ta, tb;
  for (int r = 0; r < repeats; ++r) {
    ta.push_back(seconds_of(a));
    tb.push_back(seconds_of(b));
  }
  return {spread_of(ta), spread_of(tb)};
}

// The sequence model's step at several (b, t): polymorphic in both / specialised.
void sequence_rows(int repeats) {
  const auto keys = random::split(random::key(1), 6);
  SeqParams p{random::normal(keys[0], {kSeqIn, kSeqHidden}) * 0.125f, zeros({kSeqHidden}),
              random::normal(keys[1], {kSeqHidden}) * 0.1f, random::normal(keys[2], {kSeqHidden, kOut}) * 0.09f};
  const JitOptions base{.wait_for_compile = true};
  JitOptions poly_options = base;
  poly_options.polymorphic_shapes = {"(64, 128)", "(128,)", "(128,)", "(128, 10)", "(b, t, 64)", "(b, 10)"};
  auto poly = jit(seq_step, poly_options);
  std::printf("\nsequence classifier step (tokens (b, t, 64), tanh layer of 128, attention pooling over t), f32\n");
  std::printf("%6s %6s %12s %12s %9s\n", "batch", "t", "poly ms", "special ms", "poly/spec");
  for (auto [b, t] : std::vector<std::pair<int64_t, int64_t>>{{32, 16}, {32, 100}, {8, 300}, {128, 50}, {1, 64}}) {
    Array x = random::normal(random::fold_in(keys[3], b * 1000 + t), {b, t, kSeqIn});
    Array y = one_hot(random::randint(random::fold_in(keys[4], b), {b}, 0, kOut), kOut);
    auto special = jit(seq_step, base);
    auto run = [&](auto& f) { return [&] { (void)f(p, x, y).second.template item<float>(); }; };
    const auto [sp, ss] = interleaved(repeats, run(poly), run(special));
    std::printf("%6lld %6lld %12.3f %12.3f %8.2fx\n", static_cast<long long>(b), static_cast<long long>(t),
                sp.median * 1e3, ss.median * 1e3, sp.median / ss.median);
    std::fflush(stdout);
  }
  std::printf("  traced %zu times, %zu executable\n", poly.trace_count(), poly.cache_size());
  // Which kernels the last instance runs compiled.
  auto compiled = poly.lower(p, zeros({3, 5, kSeqIn}), zeros({3, kOut})).compile();
  (void)compiled(p, zeros({4, 70, kSeqIn}), zeros({4, kOut})).second.item<float>();
  std::istringstream text(compiled.as_text());
  for (std::string line; std::getline(text, line);)
    if (line.rfind("the most recent", 0) == 0 || line.rfind("  node", 0) == 0) std::printf("  %s\n", line.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  const auto [python, repeats] = parse_peer_args(argc, argv, 9);
  const auto keys = random::split(random::key(0), 4);
  Params p{random::normal(keys[0], {kIn, kHidden}) * static_cast<float>(1 / std::sqrt(double(kIn))), zeros({kHidden}),
           random::normal(keys[1], {kHidden, kOut}) * static_cast<float>(1 / std::sqrt(double(kHidden))),
           zeros({kOut})};
  Array X = random::normal(keys[2], {kMaxBatch, kIn});
  Array Y = one_hot(random::randint(keys[3], {kMaxBatch}, 0, kOut), kOut);
  auto rows = [&](int64_t b) { return std::make_pair(slice(X, {0, 0}, {b, kIn}), slice(Y, {0, 0}, {b, kOut})); };
  const auto jax = run_jax(python, repeats);

  const JitOptions base{.wait_for_compile = true};
  JitOptions poly_options = base;
  poly_options.polymorphic_shapes = {"(784, 512)", "(512,)", "(512, 10)", "(10,)", "(b, 784)", "(b, 10)"};
  std::printf("SGD step of an MLP %lld-%lld-%lld (relu, log_softmax cross-entropy), f32, %s\n",
              static_cast<long long>(kIn), static_cast<long long>(kHidden), static_cast<long long>(kOut),
              build_info().c_str());
  std::printf("%6s %12s %12s %9s | %9s %10s\n", "batch", "poly ms", "special ms", "poly/spec", "jax ms", "poly/jax");
  auto poly = jit(sgd_step, poly_options);
  for (int64_t b : kSizes) {
    auto [x, y] = rows(b);
    auto special = jit(sgd_step, base);
    auto run = [&](auto& f) { return [&] { (void)f(p, x, y).second.template item<float>(); }; };
    const auto [sp, ss] = interleaved(repeats, run(poly), run(special));
    std::printf("%6lld %12.3f %12.3f %8.2fx", static_cast<long long>(b), sp.median * 1e3, ss.median * 1e3,
                sp.median / ss.median);
    auto j = jax.find("ms" + std::to_string(b));
    if (j != jax.end())
      std::printf(" | %9.3f %9.2fx\n", j->second, sp.median * 1e3 / j->second);
    else
      std::printf(" | %9s %10s\n", "-", "-");
    std::fflush(stdout);
  }
  {  // Which of the module's kernels an instance at another size runs (the others run on the interpreter).
    auto compiled = poly.lower(p, rows(3).first, rows(3).second).compile();
    auto [x, y] = rows(100);
    (void)compiled(p, x, y).second.item<float>();
    std::istringstream text(compiled.as_text());
    for (std::string line; std::getline(text, line);)
      if (line.rfind("polymorphic", 0) == 0 || line.rfind("the most recent", 0) == 0 || line.rfind("  node", 0) == 0)
        std::printf("  %s\n", line.c_str());
  }

  // A training loop over every batch size: one step each.
  auto loop = jit(sgd_step, poly_options);
  Params q = p;
  const double t_poly = seconds_of([&] {
    for (int64_t b = 1; b <= kMaxBatch; ++b) {
      auto [x, y] = rows(b);
      q = loop(q, x, y).first;
    }
    (void)q.b2.to_vector<float>();
  });
  // Specialised: each size traces and compiles; timed on every 64th size and scaled to 1024.
  double t_special = 0;
  int sampled = 0;
  for (int64_t b = 1; b <= kMaxBatch; b += 64) {
    auto [x, y] = rows(b);
    auto special = jit(sgd_step, base);
    t_special += seconds_of([&] { (void)special(p, x, y).second.item<float>(); });
    ++sampled;
  }
  t_special *= static_cast<double>(kMaxBatch) / sampled;
  std::printf("\ntraining loop, one step at every batch size 1..%lld:\n", static_cast<long long>(kMaxBatch));
  std::printf(
      "  graft polymorphic:  %8.2f s, traced %zu times (the sample sizes; f runs once more at each new size to "
      "check its program), %zu executable\n",
      t_poly, loop.trace_count(), loop.cache_size());
  std::printf(
      "  graft specialised: ~%8.2f s (a trace, passes and plan per size; its C++ kernels come from the module\n"
      "                                cache, their sources holding no batch size; timed on %d sizes, scaled)\n",
      t_special, sampled);
  auto jl = jax.find("loop0");
  if (jl != jax.end())
    std::printf("  jax.jit:            %8.2f s (a compile per shape); graft polymorphic / jax %.2fx\n", jl->second,
                t_poly / jl->second);
  sequence_rows(repeats);
  return 0;
}
