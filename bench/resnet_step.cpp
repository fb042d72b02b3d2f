// One jitted training step of ResNet-18 (ImageNet's shapes) beside JAX's
// jitted step and PyTorch's eager one: the step's time, graft's and XLA's
// planned temporary memory, and the losses of the first steps (the first
// must agree to f32 rounding).
//
//   ./build/bench/resnet_step [--python /path/to/venv/bin/python] [--repeats 5] [--trace DIR]
//
// --trace DIR traces one more step with graft's profiler into DIR (read it
// with `graft-inspect profile DIR/graft-*.trace.json`).
//
// Model: ResNet-18 (7x7/2 stem, 3x3/2 max pool, 4 stages of 2 basic blocks,
// 64-512 channels, 1x1/2 projections, global average pool, 1000 classes),
// every convolution followed by batch normalisation over the batch (training
// mode; no running statistics), f32, NHWC (PyTorch: channels_last), batch 32
// of 224x224x3 images; softmax cross-entropy; SGD with momentum 0.9, lr 0.001.
// Every side starts from the same weights (the formula `det`, repeated in
// NumPy) and sees the same batches. Goal (issue "Speed on real models"):
// time <= PyTorch's, run when --python has torch.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "graft/graft.h"
#include "python_peer.h"
#include "timing.h"

using namespace graft;

struct ConvBn {
  Array w, g, b;  // HWIO kernel; batch norm's scale and shift
};
GRAFT_PYTREE(ConvBn, w, g, b);

struct BasicBlock {
  ConvBn c1, c2;
  std::vector<ConvBn> down;  // the 1x1/2 projection of the shortcut, where the block strides
};
GRAFT_PYTREE(BasicBlock, c1, c2, down);

struct ResNet {
  ConvBn stem;
  std::vector<BasicBlock> blocks;
  Array fc_w, fc_b;
};
GRAFT_PYTREE(ResNet, stem, blocks, fc_w, fc_b);

namespace {

constexpr int64_t kBatch = 32, kSize = 224, kClasses = 1000;
constexpr int kLossSteps = 3;
constexpr float kLr = 0.001f, kMomentum = 0.9f;
const int64_t kWidths[4] = {64, 128, 256, 512};

// Uniform values in [-1, 1) times scale * sqrt(3) (so of spread `scale`)
// for the flat index k: ((k + 7919 seed) * 2654435761 mod 2^32) / 2^31 - 1,
// exact in integers, so NumPy repeats it bit for bit. (The GPT step's sines
// repeat every ~9 elements: here they left channels nearly constant over
// the image, whose batch norm then magnified f32 roundings 10^4-fold.)
Array det(Shape shape, int64_t seed, float scale) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  const float spread = scale * std::sqrt(3.0f);
  for (int64_t k = 0; k < n; ++k) {
    const uint64_t h = (uint64_t(k + 7919 * seed) * 2654435761ull) % (uint64_t(1) << 32);
    v[size_t(k)] = static_cast<float>(double(h) / 2147483648.0 - 1.0) * spread;
  }
  return array(v, shape);
}

// A k x k convolution from `in` to `out` channels, He-scaled, numbered `seed`.
ConvBn conv_bn(int64_t k, int64_t in, int64_t out, int64_t seed) {
  return ConvBn{det({k, k, in, out}, seed, std::sqrt(2.0f / float(k * k * in))), ones({out}), zeros({out})};
}

ResNet init() {
  ResNet p{conv_bn(7, 3, 64, 1), {}, det({512, kClasses}, 2, 1.0f / std::sqrt(512.0f)), zeros({kClasses})};
  int64_t in = 64;
  int64_t seed = 10;
  for (int s = 0; s < 4; ++s)
    for (int b = 0; b < 2; ++b) {
      const int64_t out = kWidths[s];
      BasicBlock block{conv_bn(3, in, out, seed), conv_bn(3, out, out, seed + 1), {}};
      if (in != out) block.down.push_back(conv_bn(1, in, out, seed + 2));
      p.blocks.push_back(block);
      in = out, seed += 10;
    }
  return p;
}

// Images of batch `step` (NHWC) and their labels (b*7 + step*3) mod 1000.
Array images(int step) { return det({kBatch, kSize, kSize, 3}, 100 + step, 1.0f); }
Array labels(int step) {
  std::vector<int32_t> v(static_cast<size_t>(kBatch));
  for (int64_t b = 0; b < kBatch; ++b) v[size_t(b)] = int32_t((b * 7 + step * 3) % kClasses);
  return array(v, {kBatch});
}

// Convolution, then batch normalisation with the batch's statistics, then ReLU unless `relu` is false.
Array apply(const ConvBn& p, const Array& x, int64_t stride, int64_t pad, bool relu = true) {
  const ConvDimensionNumbers nhwc{"NHWC", "HWIO", "NHWC"};
  const Array y = conv_general_dilated(x, p.w, {stride, stride}, Padding({{pad, pad}, {pad, pad}}), {}, {}, nhwc);
  const Array z = nn::standardize(y, {0, 1, 2}, 1e-5) * p.g + p.b;
  return relu ? nn::relu(z) : z;
}

Array loss(const ResNet& p, const Array& x, const Array& y) {
  Array h = apply(p.stem, x, 2, 3);
  h = reduce_window_max(h, {1, 3, 3, 1}, {1, 2, 2, 1}, Padding({{0, 0}, {1, 1}, {1, 1}, {0, 0}}));
  for (const BasicBlock& b : p.blocks) {
    const int64_t stride = b.down.empty() ? 1 : 2;
    const Array shortcut = b.down.empty() ? h : apply(b.down[0], h, 2, 0, false);
    h = nn::relu(apply(b.c2, apply(b.c1, h, stride, 1), 1, 1, false) + shortcut);
  }
  const Array logits = matmul(mean(h, {1, 2}), p.fc_w) + p.fc_b;
  return -mean(sum(log_softmax(logits) * one_hot(y, kClasses), {-1}));
}

std::tuple<Array, ResNet, ResNet> train_step(const ResNet& p, const ResNet& momentum, const Array& x, const Array& y) {
  auto [value, g] = value_and_grad(loss)(p, x, y);
  const ResNet m = tree::map([](const Array& m, const Array& g) { return m * kMomentum + g; }, momentum, g);
  const ResNet next = tree::map([](const Array& w, const Array& m) { return w - kLr * m; }, p, m);
  return {value, next, m};
}

// The weights and batches in NumPy, the same formulas as above, as a list
// `convs` of (HWIO kernel, scale, shift) in the order init() makes them and
// the classifier fc_w, fc_b; a peer's script defines leaf(array) and
// kernel_leaf(array) (HWIO in, its own layout out) first.
std::string python_model_setup() {
  return "B, S, C = " + std::to_string(kBatch) + ", " + std::to_string(kSize) + ", " + std::to_string(kClasses) +
         "\n"
         "def det(shape, seed, scale):\n"
         "  k = np.arange(int(np.prod(shape)), dtype=np.uint64) + np.uint64(7919 * seed)\n"
         "  h = (k * np.uint64(2654435761)) % np.uint64(2 ** 32)\n"
         "  u = (h.astype(np.float64) / 2147483648.0 - 1.0).astype(np.float32)\n"
         "  return (u * (np.float32(scale) * np.sqrt(np.float32(3)))).reshape(shape)\n"
         "def conv_bn(k, i, o, seed):\n"
         "  return [kernel_leaf(det((k, k, i, o), seed, np.sqrt(np.float32(2) / np.float32(k * k * i)))),\n"
         "          leaf(np.ones(o, np.float32)), leaf(np.zeros(o, np.float32))]\n"
         "stem = conv_bn(7, 3, 64, 1)\n"
         "fc_w = leaf(det((512, C), 2, np.float32(1) / np.sqrt(np.float32(512)))); fc_b = leaf(np.zeros(C, "
         "np.float32))\n"
         "blocks = []; i = 64; seed = 10\n"
         "for s in range(4):\n"
         "  for b in range(2):\n"
         "    o = [64, 128, 256, 512][s]\n"
         "    blocks.append(dict(c1=conv_bn(3, i, o, seed), c2=conv_bn(3, o, o, seed + 1),\n"
         "                       down=[conv_bn(1, i, o, seed + 2)] if i != o else []))\n"
         "    i = o; seed += 10\n"
         "def images(step): return det((B, S, S, 3), 100 + step, 1.0)\n"
         "def labels(step): return (np.arange(B) * 7 + step * 3) % C\n";
}

// JAX's side, printed as lines "loss <step> <value>", "temp_mib <x>", "ms <min> <median> <max>".
std::string jax_script(int repeats) {
  return std::string("import time, numpy as np, jax, jax.numpy as jnp\n") + kPythonSpread +
         "leaf = kernel_leaf = jnp.asarray\n" + python_model_setup() +
         "p = dict(stem=stem, blocks=blocks, fc_w=fc_w, fc_b=fc_b)\n"
         "def apply(q, x, stride, pad, relu=True):\n"
         "  y = jax.lax.conv_general_dilated(x, q[0], (stride, stride), [(pad, pad), (pad, pad)],\n"
         "                                   dimension_numbers=('NHWC', 'HWIO', 'NHWC'))\n"
         "  m = y.mean((0, 1, 2)); v = ((y - m) ** 2).mean((0, 1, 2))\n"
         "  z = (y - m) / jnp.sqrt(v + 1e-5) * q[1] + q[2]\n"
         "  return jax.nn.relu(z) if relu else z\n"
         "def loss(p, x, y):\n"
         "  h = apply(p['stem'], x, 2, 3)\n"
         "  h = jax.lax.reduce_window(h, -jnp.inf, jax.lax.max, (1, 3, 3, 1), (1, 2, 2, 1),\n"
         "                            [(0, 0), (1, 1), (1, 1), (0, 0)])\n"
         "  for b in p['blocks']:\n"
         "    stride = 2 if b['down'] else 1\n"
         "    short = apply(b['down'][0], h, 2, 0, False) if b['down'] else h\n"
         "    h = jax.nn.relu(apply(b['c2'], apply(b['c1'], h, stride, 1), 1, 1, False) + short)\n"
         "  logits = h.mean((1, 2)) @ p['fc_w'] + p['fc_b']\n"
         "  return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * jax.nn.one_hot(y, C), -1))\n"
         "def step(p, m, x, y):\n"
         "  value, g = jax.value_and_grad(loss)(p, x, y)\n"
         "  m = jax.tree.map(lambda m, g: m * 0.9 + g, m, g)\n"
         "  return value, jax.tree.map(lambda w, m: w - 0.001 * m, p, m), m\n"
         "m = jax.tree.map(jnp.zeros_like, p)\n"
         "f = jax.jit(step, donate_argnums=(0, 1))\n"
         "batch = lambda i: (jnp.asarray(images(i)), jnp.asarray(labels(i).astype(np.int32)))\n"
         "c = f.lower(p, m, *batch(0)).compile()\n"
         "print('temp_mib', c.memory_analysis().temp_size_in_bytes / 2**20)\n"
         "for i in range(" +
         std::to_string(kLossSteps) +
         "):\n"
         "  value, p, m = f(p, m, *batch(i)); print('loss', i, float(value), flush=True)\n"
         "x, y = batch(0)\n"
         "def one():\n"
         "  global p, m\n"
         "  value, p, m = f(p, m, x, y); jax.block_until_ready(value)\n"
         "one()\n" +
         python_step_timing("one", repeats);
}

// PyTorch's side, eager, as its users write it (channels_last tensors,
// F.conv2d, F.batch_norm in training mode, F.max_pool2d, F.cross_entropy,
// torch.optim.SGD), printed as JAX's side is, without temp_mib.
std::string torch_script(int repeats) {
  return torch_script_start() +
         "kernel_leaf = lambda a: torch.tensor(np.ascontiguousarray(a.transpose(3, 2, 0, 1))).to(\n"
         "    memory_format=torch.channels_last).requires_grad_()\n" +
         python_model_setup() +
         "params = stem + [fc_w, fc_b] + [t for b in blocks for q in [b['c1'], b['c2']] + b['down'] for t in q]\n"
         "def apply(q, x, stride, pad, relu=True):\n"
         "  z = F.batch_norm(F.conv2d(x, q[0], stride=stride, padding=pad), None, None, q[1], q[2], True, 0.0, "
         "1e-5)\n"
         "  return F.relu(z) if relu else z\n"
         "def loss(x, y):\n"
         "  h = F.max_pool2d(apply(stem, x, 2, 3), 3, 2, 1)\n"
         "  for b in blocks:\n"
         "    stride = 2 if b['down'] else 1\n"
         "    short = apply(b['down'][0], h, 2, 0, False) if b['down'] else h\n"
         "    h = F.relu(apply(b['c2'], apply(b['c1'], h, stride, 1), 1, 1, False) + short)\n"
         "  return F.cross_entropy(h.mean((2, 3)) @ fc_w + fc_b, y)\n"
         "opt = torch.optim.SGD(params, lr=0.001, momentum=0.9)\n"
         "def step(x, y):\n"
         "  opt.zero_grad(set_to_none=True); value = loss(x, y); value.backward(); opt.step()\n"
         "  return float(value)\n"
         "batch = lambda i: (torch.tensor(images(i)).permute(0, 3, 1, 2), torch.tensor(labels(i)))\n"
         "for i in range(" +
         std::to_string(kLossSteps) +
         "):\n"
         "  print('loss', i, step(*batch(i)), flush=True)\n"
         "x, y = batch(0)\n"
         "step(x, y)\n" +
         python_step_timing("lambda: step(x, y)", repeats);
}

}  // namespace

int main(int argc, char** argv) {
  const PeerArgs args = parse_peer_args(argc, argv, 5);
  ResNet p = init();
  ResNet m = tree::map([](const Array& w) { return zeros_like(w); }, p);
  auto step = jit(train_step, {.donate_argnums = {0, 1}});
  const MemoryAnalysis mem = step.lower(p, m, images(0), labels(0)).compile().memory_analysis();
  std::vector<double> losses;
  for (int i = 0; i < kLossSteps; ++i) {
    auto [value, next, state] = step(p, m, images(i), labels(i));
    losses.push_back(value.item<float>());
    p = std::move(next);
    m = std::move(state);
  }
  const Array x = images(0), y = labels(0);
  auto one = [&] {
    auto [value, next, state] = step(p, m, x, y);
    (void)value.item<float>();
    p = std::move(next);
    m = std::move(state);
  };
  one();
  const TimeSpread t = timed_spread(one, args.repeats);
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--trace") {
      profiler::start_trace(argv[i + 1]);
      const profiler::TraceAnnotation annotation("train step");
      one();
      std::printf("trace: %s\n", profiler::stop_trace().c_str());
    }

  std::printf("ResNet-18 training step: batch %lld of %lldx%lldx3, %lld classes, batch norm, SGD momentum, f32\n",
              (long long)kBatch, (long long)kSize, (long long)kSize, (long long)kClasses);
  std::printf("%s\n", build_info().c_str());
  const StepPeerRun jax = run_step_peer(args.python, "/tmp/graft_bench_resnet_step_jax.py", jax_script(args.repeats));
  const StepPeerRun torch =
      run_step_peer(args.python, "/tmp/graft_bench_resnet_step_torch.py", torch_script(args.repeats));
  const double temp = double(mem.temp_bytes) / (1 << 20);
  print_step_table(args.repeats, t.median, t.min, t.max, temp, jax, torch);
  print_losses(losses, {{"JAX", &jax}, {"PyTorch", &torch}});
  // The first loss (the forward pass from equal weights) must agree to f32 rounding. The later ones
  // follow gradients that batch norm's backward pass computes by cancellation: in f32 graft's are
  // within 0.04-0.8% of the same step's in f64 (per leaf, first batch), JAX's within 0.07-1.3%, so
  // the later losses differ by up to ~1e-2 between any two of the three; they are printed, not checked.
  return first_loss_agrees(losses, {&jax, &torch}, 1e-4) ? 0 : 1;
}
