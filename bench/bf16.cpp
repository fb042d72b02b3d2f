// bf16 beside f32 and beside JAX, in one run: a 1024^3 matrix product, a
// mixed-precision MLP training step (f32 master weights, bf16 compute, f32
// loss, as JAX programs written with jnp.bfloat16 do), and a ResNet-18 3x3
// convolution (64 to 64 channels, 56x56, NHWC, batch 8) with its gradients.
//
//   ./build/bench/bf16 [--python /path/to/venv/bin/python] [--repeats 7]
//
// graft's rows run under jit on the CPU backend; JAX's under jax.jit on its
// CPU backend, the same shapes and precisions (its own random data). Times
// are min, median and max over the repeats; the last column is graft bf16's
// median over the row's (above 1: that row is faster than graft's bf16).
// build_info() says which GEMM serves bf16 products on this CPU (its bf16
// instructions through oneDNN, or a conversion to f32 and OpenBLAS).
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "graft/graft.h"
#include "python_peer.h"
#include "timing.h"

using namespace graft;

namespace {

void show(const char* row, const char* path, const TimeSpread& t, double base) {
  std::printf("%-26s %-16s %9.3f %9.3f %9.3f %8.2f\n", row, path, t.min * 1e3, t.median * 1e3, t.max * 1e3,
              base / t.median);
}

// A 784-1024-1024-10 MLP's cross-entropy loss on a batch, computed in
// `compute` (the weights are f32 and cast on the way in).
Array mlp_loss(const std::vector<Array>& p, const Array& x, const Array& labels, DType compute) {
  auto c = [compute](const Array& a) { return astype(a, compute); };
  Array h = c(x);
  for (size_t i = 0; i + 2 < p.size(); i += 2) h = nn::relu(matmul(h, c(p[i])) + c(p[i + 1]));
  const Array logits = astype(matmul(h, c(p[p.size() - 2])) + c(p.back()), f32);
  return -mean(sum(log_softmax(logits) * labels, {1}));
}

}  // namespace

int main(int argc, char** argv) {
  const auto [python, repeats] = parse_peer_args(argc, argv, 7);
  std::printf("%s\n\n", build_info().c_str());
  std::printf("%-26s %-16s %29s %8s\n", "", "path", "time ms (min med max)", "bf16/this");

  // 1. matmul 1024^3.
  const Array a32 = random::normal(random::key(1), {1024, 1024});
  const Array b32 = random::normal(random::key(2), {1024, 1024});
  const Array a16 = astype(a32, bf16), b16 = astype(b32, bf16);
  auto mm = jit([](const Array& a, const Array& b) { return matmul(a, b); }, JitOptions{.backend = Backend::cpu});
  Array y = mm(a16, b16);
  const TimeSpread mm16 = timed_spread([&] { y = mm(a16, b16); }, repeats);
  show("matmul 1024^3", "graft bf16", mm16, mm16.median);
  y = mm(a32, b32);
  show("matmul 1024^3", "graft f32", timed_spread([&] { y = mm(a32, b32); }, repeats), mm16.median);

  // 2. One SGD step of the MLP.
  const int64_t batch = 256;
  const std::vector<int64_t> widths = {784, 1024, 1024, 10};
  auto keys = random::split(random::key(3), 8);
  std::vector<Array> params;
  for (size_t i = 0; i + 1 < widths.size(); ++i) {
    params.push_back(random::normal(keys[i], {widths[i], widths[i + 1]}) * (1 / std::sqrt(double(widths[i]))));
    params.push_back(zeros({widths[i + 1]}));
  }
  const Array x = random::normal(keys[6], {batch, 784});
  const Array labels = one_hot(random::randint(keys[7], {batch}, 0, 10), 10);
  auto step_in = [&](DType d) {
    return jit(
        [d](const std::vector<Array>& p, const Array& xb, const Array& lb) {
          const std::vector<Array> g = grad([&](const std::vector<Array>& q) { return mlp_loss(q, xb, lb, d); })(p);
          std::vector<Array> next;
          for (size_t i = 0; i < p.size(); ++i) next.push_back(p[i] - 0.01 * g[i]);
          return next;
        },
        JitOptions{.backend = Backend::cpu});
  };
  auto step16 = step_in(bf16), step32 = step_in(f32);
  std::vector<Array> next = step16(params, x, labels);
  const TimeSpread s16 = timed_spread([&] { next = step16(params, x, labels); }, repeats);
  show("MLP step 256x784-1024^2-10", "graft bf16", s16, s16.median);
  next = step32(params, x, labels);
  show("MLP step 256x784-1024^2-10", "graft f32", timed_spread([&] { next = step32(params, x, labels); }, repeats),
       s16.median);

  // 3. ResNet-18 convolutions, forward and both gradients (NHWC/HWIO, SAME): stage 1's (64 to 64
  // channels) and stage 2's downsampling one (stride 2, 64 to 128; its input gradient is a transposed
  // convolution).
  const Array img32 = random::normal(keys[4], {8, 56, 56, 64});
  const Array ker32 = random::normal(keys[5], {3, 3, 64, 64}) * 0.05,
              down32 = random::normal(keys[5], {3, 3, 64, 128}) * 0.05;
  auto conv_step_of = [](int64_t stride) {
    return jit(
        [stride](const Array& img, const Array& ker) {
          auto f = [stride](const Array& i, const Array& k) {
            return sum(square(conv_general_dilated(i, k, {stride, stride}, "SAME", {}, {}, {"NHWC", "HWIO", "NHWC"})));
          };
          const auto [gi, gk] = grad<0, 1>(f)(img, ker);
          return std::vector<Array>{gi, gk};
        },
        JitOptions{.backend = Backend::cpu});
  };
  auto conv_step = conv_step_of(1), down_step = conv_step_of(2);
  const Array img16 = astype(img32, bf16), ker16 = astype(ker32, bf16), down16 = astype(down32, bf16);
  std::vector<Array> cg = conv_step(img16, ker16);
  const TimeSpread c16 = timed_spread([&] { cg = conv_step(img16, ker16); }, repeats);
  show("conv 3x3 64ch 56^2 b8 +grad", "graft bf16", c16, c16.median);
  cg = conv_step(img32, ker32);
  show("conv 3x3 64ch 56^2 b8 +grad", "graft f32", timed_spread([&] { cg = conv_step(img32, ker32); }, repeats),
       c16.median);
  cg = down_step(img16, down16);
  const TimeSpread d16 = timed_spread([&] { cg = down_step(img16, down16); }, repeats);
  show("conv s2 64-128ch b8 +grad", "graft bf16", d16, d16.median);
  cg = down_step(img32, down32);
  show("conv s2 64-128ch b8 +grad", "graft f32", timed_spread([&] { cg = down_step(img32, down32); }, repeats),
       d16.median);

  if (python.empty()) return 0;
  const std::string rep = std::to_string(repeats);
  const std::string script =
      std::string("import time, numpy as np\n") + kPythonSpread +
      "def show(row, name, t, base): print('%-26s %-16s %9.3f %9.3f %9.3f %8.2f' % (row, name, t[0]*1e3, t[1]*1e3, "
      "t[2]*1e3, base / t[1]))\n"
      "try:\n"
      "  import jax, jax.numpy as jnp\n"
      "except ImportError:\n"
      "  raise SystemExit(0)\n"
      "rep = " +
      rep +
      "\n"
      "a = jax.random.normal(jax.random.key(1), (1024, 1024)); b = jax.random.normal(jax.random.key(2), (1024, 1024))\n"
      "mm = jax.jit(lambda a, b: a @ b)\n"
      "def run(f, *args):\n"
      "  f(*args); return spread(lambda: jax.block_until_ready(f(*args)), rep)\n"
      "base = " +
      std::to_string(mm16.median) +
      "\n"
      "show('matmul 1024^3', 'jax bf16', run(mm, a.astype(jnp.bfloat16), b.astype(jnp.bfloat16)), base)\n"
      "show('matmul 1024^3', 'jax f32', run(mm, a, b), base)\n"
      "widths = [784, 1024, 1024, 10]\n"
      "ks = jax.random.split(jax.random.key(3), 8)\n"
      "params = []\n"
      "for i in range(3):\n"
      "  params += [jax.random.normal(ks[i], (widths[i], widths[i+1])) / np.sqrt(widths[i]), jnp.zeros(widths[i+1])]\n"
      "x = jax.random.normal(ks[6], (256, 784))\n"
      "labels = jax.nn.one_hot(jax.random.randint(ks[7], (256,), 0, 10), 10)\n"
      "def loss(p, x, lb, d):\n"
      "  h = x.astype(d)\n"
      "  for i in range(0, len(p) - 2, 2): h = jax.nn.relu(h @ p[i].astype(d) + p[i+1].astype(d))\n"
      "  logits = (h @ p[-2].astype(d) + p[-1].astype(d)).astype(jnp.float32)\n"
      "  return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * lb, axis=1))\n"
      "def step_in(d):\n"
      "  return jax.jit(lambda p, x, lb: [w - 0.01 * g for w, g in zip(p, jax.grad(lambda q: loss(q, x, lb, d))(p))])\n"
      "base = " +
      std::to_string(s16.median) +
      "\n"
      "show('MLP step 256x784-1024^2-10', 'jax bf16', run(step_in(jnp.bfloat16), params, x, labels), base)\n"
      "show('MLP step 256x784-1024^2-10', 'jax f32', run(step_in(jnp.float32), params, x, labels), base)\n"
      "img = jax.random.normal(ks[4], (8, 56, 56, 64)); ker = jax.random.normal(ks[5], (3, 3, 64, 64)) * 0.05\n"
      "down = jax.random.normal(ks[5], (3, 3, 64, 128)) * 0.05\n"
      "def conv_loss(i, k, s):\n"
      "  return jnp.sum(jnp.square(jax.lax.conv_general_dilated(i, k, (s, s), 'SAME', dimension_numbers=('NHWC', "
      "'HWIO', 'NHWC'))))\n"
      "conv_step = jax.jit(jax.grad(lambda i, k: conv_loss(i, k, 1), argnums=(0, 1)))\n"
      "down_step = jax.jit(jax.grad(lambda i, k: conv_loss(i, k, 2), argnums=(0, 1)))\n"
      "base = " +
      std::to_string(c16.median) +
      "\n"
      "show('conv 3x3 64ch 56^2 b8 +grad', 'jax bf16', run(conv_step, img.astype(jnp.bfloat16), "
      "ker.astype(jnp.bfloat16)), base)\n"
      "show('conv 3x3 64ch 56^2 b8 +grad', 'jax f32', run(conv_step, img, ker), base)\n"
      "base = " +
      std::to_string(d16.median) +
      "\n"
      "show('conv s2 64-128ch b8 +grad', 'jax bf16', run(down_step, img.astype(jnp.bfloat16), "
      "down.astype(jnp.bfloat16)), base)\n"
      "show('conv s2 64-128ch b8 +grad', 'jax f32', run(down_step, img, down), base)\n";
  run_python_script(python, "/tmp/graft_bench_bf16.py", script);
  return 0;
}
