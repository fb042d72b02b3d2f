// One jitted training step of a small character-level GPT beside JAX's: the
// step's time, its planned temporary memory (memory_analysis), and the
// losses of the first steps, which must agree.
//
//   ./build/bench/gpt_step [--python /path/to/venv/bin/python] [--repeats 20] [--plan FILE]
//                          [--trace DIR] [--bf16]
//
// --plan FILE writes the compiled step (its kernels and memory plan) to FILE;
// --bf16 runs every matrix product on bf16 operands (f32 results, f32
// master weights), in all three frameworks;
// --trace DIR traces 3 more steps with graft's profiler into DIR (read it
// with `graft-inspect profile DIR/graft-*.trace.json` or ui.perfetto.dev).
//
// Model: 4 pre-norm blocks (layer norm, 4-head causal attention, layer norm,
// GELU MLP of 4x width), d = 256, context 128, vocabulary 65, tied output
// embedding; batch 16; AdamW (lr 3e-4, betas 0.9/0.95, weight decay 0.1 on
// every leaf). Both sides start from the same weights (the formula `det`,
// repeated in NumPy) and see the same batches. Goals (issue "Speed on real
// models"): temporaries <= 1.1x XLA's plan; time <= 0.8x PyTorch eager's
// (torch.optim.AdamW, F.scaled_dot_product_attention), run when --python has torch.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "graft/graft.h"
#include "python_peer.h"
#include "timing.h"

using namespace graft;

struct Block {
  Array ln1_g, ln1_b, wq, bq, wk, bk, wv, bv, wo, bo, ln2_g, ln2_b, w_fc, b_fc, w_proj, b_proj;
};
GRAFT_PYTREE(Block, ln1_g, ln1_b, wq, bq, wk, bk, wv, bv, wo, bo, ln2_g, ln2_b, w_fc, b_fc, w_proj, b_proj);

struct Gpt {
  Array wte, wpe;
  std::vector<Block> blocks;
  Array lnf_g, lnf_b;
};
GRAFT_PYTREE(Gpt, wte, wpe, blocks, lnf_g, lnf_b);

struct AdamW {
  Gpt m, v;
  Array t;
};
GRAFT_PYTREE(AdamW, m, v, t);

namespace {

constexpr int64_t kLayers = 4, kD = 256, kHeads = 4, kT = 128, kVocab = 65, kBatch = 16;
constexpr int kLossSteps = 5;

// float32(sin(k*0.7 + seed)) * scale for the flat index k (the sine in double).
Array det(Shape shape, double seed, float scale) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) v[size_t(k)] = static_cast<float>(std::sin(double(k) * 0.7 + seed)) * scale;
  return array(v, shape);
}

Gpt init() {
  const float s = 0.02f, sp = 0.02f / std::sqrt(2.0f * kLayers);
  Gpt p{det({kVocab, kD}, 1, s), det({kT, kD}, 2, s), {}, ones({kD}), zeros({kD})};
  for (int64_t l = 0; l < kLayers; ++l) {
    const double b = 10.0 * double(l + 1);
    p.blocks.push_back(Block{ones({kD}), zeros({kD}), det({kD, kD}, b + 1, s), zeros({kD}), det({kD, kD}, b + 2, s),
                             zeros({kD}), det({kD, kD}, b + 3, s), zeros({kD}), det({kD, kD}, b + 4, sp), zeros({kD}),
                             ones({kD}), zeros({kD}), det({kD, 4 * kD}, b + 5, s), zeros({4 * kD}),
                             det({4 * kD, kD}, b + 6, sp), zeros({kD})});
  }
  return p;
}

// Tokens of batch `step`: (b*131 + t*7 + step*13) mod V, targets the next ones.
Array tokens(int step, int shift) {
  std::vector<int32_t> v(size_t(kBatch * kT));
  for (int64_t b = 0; b < kBatch; ++b)
    for (int64_t t = 0; t < kT; ++t) v[size_t(b * kT + t)] = int32_t((b * 131 + (t + shift) * 7 + step * 13) % kVocab);
  return array(v, {kBatch, kT});
}

// --bf16: every matrix product's operands rounded to bf16 (the CPU's bf16
// units where it has them), its result back in f32; the weights (f32
// master copies), layer norm, softmax, GELU and the optimizer stay f32.
bool g_bf16 = false;

Array mm(const Array& a, const Array& b) {
  if (!g_bf16) return matmul(a, b);
  return astype(matmul(astype(a, DType::bf16), astype(b, DType::bf16)), DType::f32);
}

Array layer_norm(const Array& x, const Array& g, const Array& b) { return nn::standardize(x, {-1}, 1e-5) * g + b; }

// [B, T, D] -> [B, H, T, D/H]
Array heads(const Array& x) { return transpose(reshape(x, {kBatch, kT, kHeads, kD / kHeads}), {0, 2, 1, 3}); }

Array attention(const Block& p, const Array& h, const Array& causal) {
  const Array q = heads(mm(h, p.wq) + p.bq), k = heads(mm(h, p.wk) + p.bk), v = heads(mm(h, p.wv) + p.bv);
  Array a = mm(q, transpose(k, {0, 1, 3, 2})) * (1.0f / std::sqrt(float(kD / kHeads)));
  a = softmax(where(causal, a, -1e9f), {-1});
  const Array y = reshape(transpose(mm(a, v), {0, 2, 1, 3}), {kBatch, kT, kD});
  return mm(y, p.wo) + p.bo;
}

Array loss(const Gpt& p, const Array& idx, const Array& targets) {
  const Array causal = tril(ones({kT, kT})) > 0.0f;
  Array x = take(p.wte, idx) + p.wpe;
  for (const Block& b : p.blocks) {
    x = x + attention(b, layer_norm(x, b.ln1_g, b.ln1_b), causal);
    x = x + mm(nn::gelu(mm(layer_norm(x, b.ln2_g, b.ln2_b), b.w_fc) + b.b_fc), b.w_proj) + b.b_proj;
  }
  const Array logits = mm(layer_norm(x, p.lnf_g, p.lnf_b), transpose(p.wte));
  return -mean(sum(log_softmax(logits) * one_hot(targets, kVocab), {-1}));
}

constexpr float kLr = 3e-4f, kB1 = 0.9f, kB2 = 0.95f, kEps = 1e-8f, kDecay = 0.1f;

std::tuple<Array, Gpt, AdamW> train_step(const Gpt& p, const AdamW& s, const Array& idx, const Array& targets) {
  auto [value, g] = value_and_grad(loss)(p, idx, targets);
  const Array t = s.t + 1.0f;
  const Gpt m = tree::map([](const Array& m, const Array& g) { return m * kB1 + g * (1 - kB1); }, s.m, g);
  const Gpt v = tree::map([](const Array& v, const Array& g) { return v * kB2 + square(g) * (1 - kB2); }, s.v, g);
  const Array c1 = 1.0f - pow(kB1, t), c2 = 1.0f - pow(kB2, t);
  const Gpt next = tree::map([&](const Array& w, const Array& m,
                                 const Array& v) { return w - kLr * ((m / c1) / (sqrt(v / c2) + kEps) + kDecay * w); },
                             p, m, v);
  return {value, next, AdamW{m, v, t}};
}

// The model's weights and batches in NumPy, the same formulas as `det` and
// `tokens` above; a peer's script defines leaf(array) (its tensor type) and
// int_tokens(array) (its index type) before this text.
std::string python_model_setup() {
  return "L, D, H, T, V, B = " + std::to_string(kLayers) + ", " + std::to_string(kD) + ", " + std::to_string(kHeads) +
         ", " + std::to_string(kT) + ", " + std::to_string(kVocab) + ", " + std::to_string(kBatch) +
         "\n"
         "def det(shape, seed, scale):\n"
         "  n = int(np.prod(shape)); k = np.arange(n, dtype=np.float64)\n"
         "  return leaf((np.sin(k * 0.7 + seed).astype(np.float32) * np.float32(scale)).reshape(shape))\n"
         "s = 0.02; sp = float(np.float32(0.02) / np.sqrt(np.float32(2 * L)))\n"
         "z = lambda *sh: leaf(np.zeros(sh, np.float32)); o = lambda *sh: leaf(np.ones(sh, np.float32))\n"
         "blocks = []\n"
         "for l in range(L):\n"
         "  b = 10.0 * (l + 1)\n"
         "  blocks.append(dict(ln1_g=o(D), ln1_b=z(D), wq=det((D, D), b + 1, s), bq=z(D), wk=det((D, D), b + 2, s),\n"
         "    bk=z(D), wv=det((D, D), b + 3, s), bv=z(D), wo=det((D, D), b + 4, sp), bo=z(D), ln2_g=o(D), ln2_b=z(D),\n"
         "    w_fc=det((D, 4 * D), b + 5, s), b_fc=z(4 * D), w_proj=det((4 * D, D), b + 6, sp), b_proj=z(D)))\n"
         "wte, wpe, lnf_g, lnf_b = det((V, D), 1, s), det((T, D), 2, s), o(D), z(D)\n"
         "def tokens(step, shift):\n"
         "  b = np.arange(B)[:, None]; t = np.arange(T)[None, :]\n"
         "  return int_tokens((b * 131 + (t + shift) * 7 + step * 13) % V)\n";
}

// JAX's side, printed as lines "loss <step> <value>", "temp_mib <x>", "ms <min> <median> <max>".
std::string jax_script(int repeats) {
  const std::string bf16 = g_bf16 ? "True" : "False";
  return std::string("import time, numpy as np, jax, jax.numpy as jnp\n") + kPythonSpread +
         "leaf = jnp.asarray\n"
         "int_tokens = lambda a: jnp.asarray(a.astype(np.int32))\n" +
         python_model_setup() + "BF16 = " + bf16 +
         "\n"
         "mm = (lambda a, b: (a.astype(jnp.bfloat16) @ b.astype(jnp.bfloat16)).astype(jnp.float32)) if BF16 else "
         "(lambda a, b: a @ b)\n"
         "p = dict(wte=wte, wpe=wpe, blocks=blocks, lnf_g=lnf_g, lnf_b=lnf_b)\n"
         "def ln(x, g, b):\n"
         "  m = x.mean(-1, keepdims=True); v = ((x - m) ** 2).mean(-1, keepdims=True)\n"
         "  return (x - m) / jnp.sqrt(v + 1e-5) * g + b\n"
         "def heads(x): return x.reshape(B, T, H, D // H).transpose(0, 2, 1, 3)\n"
         "causal = jnp.tril(jnp.ones((T, T))) > 0\n"
         "def loss(p, idx, tgt):\n"
         "  x = p['wte'][idx] + p['wpe']\n"
         "  for q in p['blocks']:\n"
         "    h = ln(x, q['ln1_g'], q['ln1_b'])\n"
         "    a = mm(heads(mm(h, q['wq']) + q['bq']), heads(mm(h, q['wk']) + q['bk']).transpose(0, 1, 3, 2))\n"
         "    a = jax.nn.softmax(jnp.where(causal, a * (1 / np.sqrt(np.float32(D // H))), -1e9), axis=-1)\n"
         "    y = mm(a, heads(mm(h, q['wv']) + q['bv'])).transpose(0, 2, 1, 3).reshape(B, T, D)\n"
         "    x = x + mm(y, q['wo']) + q['bo']\n"
         "    h = ln(x, q['ln2_g'], q['ln2_b'])\n"
         "    x = x + mm(jax.nn.gelu(mm(h, q['w_fc']) + q['b_fc'], approximate=True), q['w_proj']) + q['b_proj']\n"
         "  logits = mm(ln(x, p['lnf_g'], p['lnf_b']), p['wte'].T)\n"
         "  return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * jax.nn.one_hot(tgt, V), -1))\n"
         "lr, b1, b2, eps, wd = 3e-4, 0.9, 0.95, 1e-8, 0.1\n"
         "def step(p, s, idx, tgt):\n"
         "  value, g = jax.value_and_grad(loss)(p, idx, tgt)\n"
         "  t = s['t'] + 1.0\n"
         "  m = jax.tree.map(lambda m, g: m * b1 + g * (1 - b1), s['m'], g)\n"
         "  v = jax.tree.map(lambda v, g: v * b2 + g * g * (1 - b2), s['v'], g)\n"
         "  c1 = 1.0 - b1 ** t; c2 = 1.0 - b2 ** t\n"
         "  p = jax.tree.map(lambda w, m, v: w - lr * ((m / c1) / (jnp.sqrt(v / c2) + eps) + wd * w), p, m, v)\n"
         "  return value, p, dict(m=m, v=v, t=t)\n"
         "s = dict(m=jax.tree.map(jnp.zeros_like, p), v=jax.tree.map(jnp.zeros_like, p), t=jnp.zeros(()))\n"
         "f = jax.jit(step, donate_argnums=(0, 1))\n"
         "c = f.lower(p, s, tokens(0, 0), tokens(0, 1)).compile()\n"
         "print('temp_mib', c.memory_analysis().temp_size_in_bytes / 2**20)\n"
         "for i in range(" +
         std::to_string(kLossSteps) +
         "):\n"
         "  value, p, s = f(p, s, tokens(i, 0), tokens(i, 1)); print('loss', i, float(value))\n"
         "idx, tgt = tokens(0, 0), tokens(0, 1)\n"
         "def one():\n"
         "  global p, s\n"
         "  value, p, s = f(p, s, idx, tgt); jax.block_until_ready(value)\n"
         "for _ in range(3): one()\n" +
         python_step_timing("one", repeats);
}

// PyTorch's side, eager, as its users write it (F.layer_norm, F.gelu,
// F.scaled_dot_product_attention with is_causal, F.cross_entropy,
// torch.optim.AdamW), printed as JAX's side is, without temp_mib.
std::string torch_script(int repeats) {
  const std::string bf16 = g_bf16 ? "True" : "False";
  return torch_script_start() + "int_tokens = lambda a: torch.tensor(a.astype(np.int64))\n" + python_model_setup() +
         "BF16 = " + bf16 +
         "\n"
         "low = (lambda t: t.bfloat16()) if BF16 else (lambda t: t)\n"
         "mm = (lambda a, b: (a.bfloat16() @ b.bfloat16()).float()) if BF16 else (lambda a, b: a @ b)\n" +
         "params = [wte, wpe, lnf_g, lnf_b] + [t for q in blocks for t in q.values()]\n"
         "def heads(x): return x.view(B, T, H, D // H).transpose(1, 2)\n"
         "def loss(idx, tgt):\n"
         "  x = wte[idx] + wpe\n"
         "  for q in blocks:\n"
         "    h = F.layer_norm(x, (D,), q['ln1_g'], q['ln1_b'], 1e-5)\n"
         "    y = F.scaled_dot_product_attention(low(heads(mm(h, q['wq']) + q['bq'])), low(heads(mm(h, q['wk']) + "
         "q['bk'])),\n"
         "                                       low(heads(mm(h, q['wv']) + q['bv'])), is_causal=True).float()\n"
         "    x = x + mm(y.transpose(1, 2).reshape(B, T, D), q['wo']) + q['bo']\n"
         "    h = F.layer_norm(x, (D,), q['ln2_g'], q['ln2_b'], 1e-5)\n"
         "    x = x + mm(F.gelu(mm(h, q['w_fc']) + q['b_fc'], approximate='tanh'), q['w_proj']) + q['b_proj']\n"
         "  logits = mm(F.layer_norm(x, (D,), lnf_g, lnf_b, 1e-5), wte.T)\n"
         "  return F.cross_entropy(logits.view(-1, V), tgt.view(-1))\n"
         "opt = torch.optim.AdamW(params, lr=3e-4, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1)\n"
         "def step(idx, tgt):\n"
         "  opt.zero_grad(set_to_none=True); value = loss(idx, tgt); value.backward(); opt.step()\n"
         "  return float(value)\n"
         "for i in range(" +
         std::to_string(kLossSteps) +
         "):\n"
         "  print('loss', i, step(tokens(i, 0), tokens(i, 1)))\n"
         "idx, tgt = tokens(0, 0), tokens(0, 1)\n"
         "for _ in range(3): step(idx, tgt)\n" +
         python_step_timing("lambda: step(idx, tgt)", repeats);
}

}  // namespace

int main(int argc, char** argv) {
  const PeerArgs args = parse_peer_args(argc, argv, 20);
  for (int i = 1; i < argc; ++i) g_bf16 = g_bf16 || std::string(argv[i]) == "--bf16";
  Gpt p = init();
  AdamW s{tree::map([](const Array& w) { return zeros_like(w); }, p),
          tree::map([](const Array& w) { return zeros_like(w); }, p), zeros({})};
  auto step = jit(train_step, {.donate_argnums = {0, 1}});
  const auto compiled = step.lower(p, s, tokens(0, 0), tokens(0, 1)).compile();
  const MemoryAnalysis mem = compiled.memory_analysis();
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--plan")
      if (FILE* f = std::fopen(argv[i + 1], "w")) {
        std::fputs(compiled.as_text().c_str(), f);
        std::fclose(f);
      }
  std::vector<double> losses;
  for (int i = 0; i < kLossSteps; ++i) {
    auto [value, next, state] = step(p, s, tokens(i, 0), tokens(i, 1));
    losses.push_back(value.item<float>());
    p = std::move(next);
    s = std::move(state);
  }
  const Array idx = tokens(0, 0), tgt = tokens(0, 1);
  auto one = [&] {
    auto [value, next, state] = step(p, s, idx, tgt);
    (void)value.item<float>();
    p = std::move(next);
    s = std::move(state);
  };
  for (int i = 0; i < 3; ++i) one();
  const TimeSpread t = timed_spread(one, args.repeats);
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--trace") {
      profiler::start_trace(argv[i + 1]);
      for (int k = 0; k < 3; ++k) {
        const profiler::TraceAnnotation annotation("train step " + std::to_string(k));
        one();
      }
      std::printf("trace: %s\n", profiler::stop_trace().c_str());
    }

  std::printf("GPT training step: %lld layers, d=%lld, %lld heads, context %lld, batch %lld, AdamW, %s\n",
              (long long)kLayers, (long long)kD, (long long)kHeads, (long long)kT, (long long)kBatch,
              g_bf16 ? "bf16 products, f32 weights" : "f32");
  std::printf("%s\n", build_info().c_str());
  const StepPeerRun jax = run_step_peer(args.python, "/tmp/graft_bench_gpt_step_jax.py", jax_script(args.repeats));
  const StepPeerRun torch =
      run_step_peer(args.python, "/tmp/graft_bench_gpt_step_torch.py", torch_script(args.repeats));
  const double temp = double(mem.temp_bytes) / (1 << 20);
  print_step_table(args.repeats, t.median, t.min, t.max, temp, jax, torch);
  const double worst = print_losses(losses, {{"JAX", &jax}, {"PyTorch", &torch}});
  if (!g_bf16) return worst > 1e-4 ? 1 : 0;
  // In bf16 each product's result is rounded to 8 bits, and the updates magnify which way a rounding went:
  // graft's own two bf16 paths (oneDNN's, and GRAFT_BF16_GEMM=f32's f32 sums of the same operands) part by
  // 0.026 at the third loss, JAX and PyTorch by 0.04 at the fifth. The first loss must agree to bf16's
  // rounding; the later ones are printed, not checked.
  return first_loss_agrees(losses, {&jax, &torch}, 1e-3) ? 0 : 1;
}
