// Convolutions and pooling: graft beside JAX (XLA CPU) and PyTorch (oneDNN)
// on ResNet-18's convolution layers at batch 32, a depthwise convolution and
// ResNet's max pool, in one run.
//
//   ./build/bench/conv [--python /path/to/venv/bin/python] [--repeats 5] [--quick]
//
// Every row is f32 in NHWC/HWIO (JAX's and flax's default layouts; PyTorch
// in channels_last memory, its oneDNN layout on CPUs). For each layer:
// fwd, the convolution; dx, the gradient with respect to the input (a
// transposed convolution); dw, the gradient with respect to the kernel. The
// gradients are jitted vjps of the convolution, whose forward XLA and graft
// drop as dead code; PyTorch's are aten::convolution_backward with one
// output each. The pool rows are max_pool (3x3, stride 2, SAME) and its
// gradient. Times are min, median and max over the repeats; the last column
// is graft's median over the row's (above 1: faster than graft). --quick
// runs the first three layers only.
#include <cstdio>
#include <string>
#include <vector>

#include "graft/graft.h"
#include "python_peer.h"
#include "timing.h"

using namespace graft;

namespace {

struct Layer {
  const char* name;
  int64_t size, in, out, kernel, stride, groups;
};

void show(const std::string& row, const char* path, const TimeSpread& t, double base) {
  std::printf("%-22s %-8s %9.2f %9.2f %9.2f %8.2f\n", row.c_str(), path, t.min * 1e3, t.median * 1e3, t.max * 1e3,
              base / t.median);
}

}  // namespace

int main(int argc, char** argv) {
  const auto [python, repeats] = parse_peer_args(argc, argv, 5);
  bool quick = false;
  for (int i = 1; i < argc; ++i) quick = quick || std::string(argv[i]) == "--quick";
  const int64_t batch = 32;
  std::vector<Layer> layers = {
      {"l1 56 64>64 3x3", 56, 64, 64, 3, 1, 1},       {"l2 56 64>128 3x3/2", 56, 64, 128, 3, 2, 1},
      {"l2 28 128>128 3x3", 28, 128, 128, 3, 1, 1},   {"l2 56 64>128 1x1/2", 56, 64, 128, 1, 2, 1},
      {"l3 28 128>256 3x3/2", 28, 128, 256, 3, 2, 1}, {"l3 14 256>256 3x3", 14, 256, 256, 3, 1, 1},
      {"l3 28 128>256 1x1/2", 28, 128, 256, 1, 2, 1}, {"l4 14 256>512 3x3/2", 14, 256, 512, 3, 2, 1},
      {"l4 7 512>512 3x3", 7, 512, 512, 3, 1, 1},     {"l4 14 256>512 1x1/2", 14, 256, 512, 1, 2, 1},
      {"dw 56 128 3x3", 56, 128, 128, 3, 1, 128},
  };
  if (quick) layers.resize(3);
  const ConvDimensionNumbers nhwc{"NHWC", "HWIO", "NHWC"};
  std::printf("%-22s %-8s %29s %8s\n", "f32, batch 32", "path", "time ms (min med max)", "graft/this");
  std::string configs = "[";
  for (const Layer& l : layers) {
    const int64_t out_size = (l.size + l.stride - 1) / l.stride, pad = l.kernel / 2;
    const Array x = random::normal(random::key(1), {batch, l.size, l.size, l.in}, DType::f32);
    const Array w = random::normal(random::key(2), {l.kernel, l.kernel, l.in / l.groups, l.out}, DType::f32);
    const Array g = random::normal(random::key(3), {batch, out_size, out_size, l.out}, DType::f32);
    const Padding padding(std::vector<std::pair<int64_t, int64_t>>{{pad, pad}, {pad, pad}});
    auto conv_of = [&](const Array& a, const Array& b) {
      return conv_general_dilated(a, b, {l.stride, l.stride}, padding, {}, {}, nhwc, l.groups);
    };
    auto fwd = jit(conv_of, JitOptions{.backend = Backend::cpu});
    auto dx = jit(
        [&](const Array& a, const Array& b, const Array& ct) {
          return std::get<0>(vjp([&](const Array& v) { return conv_of(v, b); }, a).second(ct));
        },
        JitOptions{.backend = Backend::cpu});
    auto dw = jit(
        [&](const Array& a, const Array& b, const Array& ct) {
          return std::get<0>(vjp([&](const Array& v) { return conv_of(a, v); }, b).second(ct));
        },
        JitOptions{.backend = Backend::cpu});
    Array y = fwd(x, w), gx = dx(x, w, g), gw = dw(x, w, g);
    const TimeSpread tf = timed_spread([&] { y = fwd(x, w); }, repeats);
    const TimeSpread tx = timed_spread([&] { gx = dx(x, w, g); }, repeats);
    const TimeSpread tw = timed_spread([&] { gw = dw(x, w, g); }, repeats);
    show(std::string(l.name) + " fwd", "graft", tf, tf.median);
    show(std::string(l.name) + " dx", "graft", tx, tx.median);
    show(std::string(l.name) + " dw", "graft", tw, tw.median);
    configs += "('" + std::string(l.name) + "', " + std::to_string(l.size) + ", " + std::to_string(l.in) + ", " +
               std::to_string(l.out) + ", " + std::to_string(l.kernel) + ", " + std::to_string(l.stride) + ", " +
               std::to_string(l.groups) + ", " + std::to_string(tf.median) + ", " + std::to_string(tx.median) + ", " +
               std::to_string(tw.median) + "), ";
  }
  configs += "]";
  // ResNet's max pool: 3x3, stride 2, SAME, on the stem's output.
  const Array xp = random::normal(random::key(4), {batch, 112, 112, 64}, DType::f32);
  auto pool = jit(
      [](const Array& a) {
        return nn::max_pool(a, {3, 3}, {2, 2}, "SAME");
      },
      JitOptions{.backend = Backend::cpu});
  const Array gp = random::normal(random::key(5), pool(xp).shape(), DType::f32);
  auto pool_grad = jit(
      [](const Array& a, const Array& ct) {
        return std::get<0>(vjp([](const Array& v) { return nn::max_pool(v, {3, 3}, {2, 2}, "SAME"); }, a).second(ct));
      },
      JitOptions{.backend = Backend::cpu});
  Array yp = pool(xp), gxp = pool_grad(xp, gp);
  const TimeSpread tp = timed_spread([&] { yp = pool(xp); }, repeats);
  const TimeSpread tpg = timed_spread([&] { gxp = pool_grad(xp, gp); }, repeats);
  show("maxpool 112 64 3x3/2", "graft", tp, tp.median);
  show("maxpool 112 64 grad", "graft", tpg, tpg.median);
  if (python.empty()) return 0;
  const std::string script =
      "import time, numpy as np\n" + std::string(kPythonSpread) +
      "def show(row, name, t, base): print('%-22s %-8s %9.2f %9.2f %9.2f %8.2f' % (row, name, t[0]*1e3, "
      "t[1]*1e3, t[2]*1e3, base / t[1]), flush=True)\n"
      "n, rep = 32, " +
      std::to_string(repeats) + "\nconfigs = " + configs + "\npool_base = (" + std::to_string(tp.median) + ", " +
      std::to_string(tpg.median) +
      ")\n"
      "rng = np.random.default_rng(0)\n"
      "try:\n"
      "  import jax, jax.numpy as jnp\n"
      "  from jax import lax\n"
      "  for name, s, cin, cout, k, st, groups, bf, bx, bw in configs:\n"
      "    o, p = -(-s // st), k // 2\n"
      "    x = jnp.asarray(rng.standard_normal((n, s, s, cin), np.float32))\n"
      "    w = jnp.asarray(rng.standard_normal((k, k, cin // groups, cout), np.float32))\n"
      "    g = jnp.asarray(rng.standard_normal((n, o, o, cout), np.float32))\n"
      "    conv = lambda a, b: lax.conv_general_dilated(a, b, (st, st), ((p, p), (p, p)), "
      "dimension_numbers=('NHWC', 'HWIO', 'NHWC'), feature_group_count=groups)\n"
      "    f = jax.jit(conv)\n"
      "    fx = jax.jit(lambda a, b, ct: jax.vjp(lambda v: conv(v, b), a)[1](ct)[0])\n"
      "    fw = jax.jit(lambda a, b, ct: jax.vjp(lambda v: conv(a, v), b)[1](ct)[0])\n"
      "    f(x, w).block_until_ready(); fx(x, w, g).block_until_ready(); fw(x, w, g).block_until_ready()\n"
      "    show(name + ' fwd', 'jax', spread(lambda: f(x, w).block_until_ready(), rep), bf)\n"
      "    show(name + ' dx', 'jax', spread(lambda: fx(x, w, g).block_until_ready(), rep), bx)\n"
      "    show(name + ' dw', 'jax', spread(lambda: fw(x, w, g).block_until_ready(), rep), bw)\n"
      "  xp = jnp.asarray(rng.standard_normal((n, 112, 112, 64), np.float32))\n"
      "  mp = lambda a: lax.reduce_window(a, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), 'SAME')\n"
      "  f = jax.jit(mp); gp = jnp.asarray(rng.standard_normal(f(xp).shape, np.float32))\n"
      "  fg = jax.jit(lambda a, ct: jax.vjp(mp, a)[1](ct)[0])\n"
      "  f(xp).block_until_ready(); fg(xp, gp).block_until_ready()\n"
      "  show('maxpool 112 64 3x3/2', 'jax', spread(lambda: f(xp).block_until_ready(), rep), pool_base[0])\n"
      "  show('maxpool 112 64 grad', 'jax', spread(lambda: fg(xp, gp).block_until_ready(), rep), pool_base[1])\n"
      "except ImportError:\n"
      "  print('(no jax)')\n"
      "try:\n"
      "  import torch\n"
      "  torch.set_grad_enabled(False)\n"
      "  cl = torch.channels_last\n"
      "  for name, s, cin, cout, k, st, groups, bf, bx, bw in configs:\n"
      "    o, p = -(-s // st), k // 2\n"
      "    x = torch.randn(n, cin, s, s).to(memory_format=cl)\n"
      "    w = torch.randn(cout, cin // groups, k, k).to(memory_format=cl)\n"
      "    g = torch.randn(n, cout, o, o).to(memory_format=cl)\n"
      "    f = lambda: torch.nn.functional.conv2d(x, w, None, st, p, 1, groups)\n"
      "    back = lambda mask: torch.ops.aten.convolution_backward(g, x, w, None, [st, st], [p, p], [1, 1], "
      "False, [0, 0], groups, mask)\n"
      "    f(); back([True, False, False]); back([False, True, False])\n"
      "    show(name + ' fwd', 'torch', spread(f, rep), bf)\n"
      "    show(name + ' dx', 'torch', spread(lambda: back([True, False, False]), rep), bx)\n"
      "    show(name + ' dw', 'torch', spread(lambda: back([False, True, False]), rep), bw)\n"
      "  xp = torch.randn(n, 64, 112, 112).to(memory_format=cl).requires_grad_(True)\n"
      "  mp = lambda: torch.nn.functional.max_pool2d(xp, 3, 2, 1)\n"
      "  mp(); show('maxpool 112 64 3x3/2', 'torch', spread(mp, rep), pool_base[0])\n"
      "  with torch.enable_grad():\n"
      "    y = torch.nn.functional.max_pool2d(xp, 3, 2, 1); gp = torch.randn_like(y)\n"
      "    bp = lambda: torch.autograd.grad(y, xp, gp, retain_graph=True)\n"
      "    bp(); show('maxpool 112 64 grad', 'torch', spread(bp, rep), pool_base[1])\n"
      "except ImportError:\n"
      "  print('(no torch)')\n";
  run_python_script(python, "/tmp/graft_bench_conv.py", script);
  return 0;
}
