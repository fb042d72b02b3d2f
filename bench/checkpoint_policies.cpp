// jit(value_and_grad) of a deep MLP with every block checkpointed under each
// policy of checkpoint_policies, beside no checkpoint and beside JAX with the
// same policies: time, temporary memory and flops of the compiled step.
//
//   ./build/bench/checkpoint_policies [--python /path/to/venv/bin/python] [--repeats 9]
//
// Block: y = h + tanh(tanh(z1) W2), z1 = h W1 named "z1". Goals: each
// policy's temporaries <= no checkpoint's; graft's time <= 1.0x JAX's.
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "graft/graft.h"
#include "python_peer.h"
#include "timing.h"

using namespace graft;

namespace {

constexpr int kLayers = 16, kWidth = 512, kBatch = 256;

Array block(const Array& h, const Array& w1, const Array& w2) {
  Array z1 = checkpoint_name(matmul(h, w1), "z1");
  return h + tanh(matmul(tanh(z1), w2));
}

struct Row {
  std::string name;  // as jax.checkpoint_policies names it ("none": no checkpoint)
  std::optional<checkpoint_policies::Policy> policy;
};

// JAX's median ms, temp MiB and GFLOP per policy, from the peer's output lines "name ms mib gflop".
std::map<std::string, std::vector<double>> run_jax(const std::string& python, int repeats) {
  std::map<std::string, std::vector<double>> out;
  if (python.empty()) return out;
  const std::string script =
      std::string("import time, numpy as np, jax, jax.numpy as jnp\n") + kPythonSpread +
      "from jax.ad_checkpoint import checkpoint_name\n"
      "cp = jax.checkpoint_policies\n"
      "L, D, B = " +
      std::to_string(kLayers) + ", " + std::to_string(kWidth) + ", " + std::to_string(kBatch) +
      "\n"
      "k = jax.random.split(jax.random.key(0), 3)\n"
      "W1 = jax.random.normal(k[0], (L, D, D)) / np.sqrt(D); W2 = jax.random.normal(k[1], (L, D, D)) / np.sqrt(D)\n"
      "x = jax.random.normal(k[2], (B, D))\n"
      "def block(h, w1, w2):\n"
      "  z1 = checkpoint_name(h @ w1, 'z1')\n"
      "  return h + jnp.tanh(jnp.tanh(z1) @ w2)\n"
      "pol = {'none': None, 'everything_saveable': cp.everything_saveable, 'nothing_saveable': cp.nothing_saveable,\n"
      "       'dots_saveable': cp.dots_saveable, 'dots_with_no_batch_dims_saveable': "
      "cp.dots_with_no_batch_dims_saveable,\n"
      "       'save_only_these_names': cp.save_only_these_names('z1'),\n"
      "       'save_anything_except_these_names': cp.save_anything_except_these_names('z1')}\n"
      "for name, p in pol.items():\n"
      "  b = block if name == 'none' else jax.checkpoint(block, policy=p)\n"
      "  def loss(w1, w2, xb):\n"
      "    h = xb\n"
      "    for i in range(L): h = b(h, w1[i], w2[i])\n"
      "    return jnp.mean(h * h)\n"
      "  f = jax.jit(jax.value_and_grad(loss, argnums=(0, 1)))\n"
      "  c = f.lower(W1, W2, x).compile()\n"
      "  mem = c.memory_analysis().temp_size_in_bytes / 2**20\n"
      "  ca = c.cost_analysis(); ca = ca[0] if isinstance(ca, list) else ca\n"
      "  jax.block_until_ready(f(W1, W2, x))\n"
      "  s = spread(lambda: jax.block_until_ready(f(W1, W2, x)), " +
      std::to_string(repeats) +
      ")\n"
      "  print(name, s[1] * 1e3, mem, ca.get('flops', 0) / 1e9)\n";
  for (const std::string& line : python_output_lines(python, "/tmp/graft_bench_checkpoint_policies.py", script)) {
    char name[128];
    double ms, mib, gf;
    if (std::sscanf(line.c_str(), "%127s %lf %lf %lf", name, &ms, &mib, &gf) == 4) out[name] = {ms, mib, gf};
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace checkpoint_policies;
  const auto [python, repeats] = parse_peer_args(argc, argv, 9);
  const auto keys = random::split(random::key(0), 3);
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(kWidth)));
  Array W1 = random::normal(keys[0], {kLayers, kWidth, kWidth}) * scale;
  Array W2 = random::normal(keys[1], {kLayers, kWidth, kWidth}) * scale;
  Array x = random::normal(keys[2], {kBatch, kWidth});
  const std::vector<Row> rows = {
      {"none", std::nullopt},
      {"everything_saveable", everything_saveable},
      {"nothing_saveable", nothing_saveable},
      {"dots_saveable", dots_saveable},
      {"dots_with_no_batch_dims_saveable", dots_with_no_batch_dims_saveable},
      {"save_only_these_names", save_only_these_names({"z1"})},
      {"save_anything_except_these_names", save_anything_except_these_names({"z1"})},
  };
  const auto jax_rows = run_jax(python, repeats);
  std::printf("jit(value_and_grad) of a %d-layer MLP (two %dx%d matmuls per block, batch %d), f32, %s\n", kLayers,
              kWidth, kWidth, kBatch, build_info().c_str());
  std::printf("%-34s %10s %8s %8s %8s | %9s %8s %8s %7s\n", "policy (save_* names: z1)", "ms median", "min", "max",
              "temp MiB", "jax ms", "jax MiB", "GFLOP", "graft/jax");
  double none_temp = 0;
  for (const Row& row : rows) {
    auto loss = [&](const Array& w1, const Array& w2, const Array& xb) {
      Array h = xb;
      for (int i = 0; i < kLayers; ++i)
        h = row.policy ? checkpoint(block, *row.policy)(h, w1[i], w2[i]) : block(h, w1[i], w2[i]);
      return mean(h * h);
    };
    auto step = jit(value_and_grad<0, 1>(loss), JitOptions{.wait_for_compile = true});
    auto compiled = step.lower(W1, W2, x).compile();
    const double temp = static_cast<double>(compiled.memory_analysis().temp_bytes) / (1 << 20);
    const double gflop = compiled.cost_analysis().flops / 1e9;
    if (!row.policy) none_temp = temp;
    auto warm = step(W1, W2, x);
    (void)warm.first.item<float>();
    const TimeSpread t = timed_spread(
        [&] {
          auto out = step(W1, W2, x);
          (void)std::get<0>(out.second).to_vector<float>();
        },
        repeats);
    std::printf("%-34s %10.2f %8.2f %8.2f %8.1f", row.name.c_str(), t.median * 1e3, t.min * 1e3, t.max * 1e3, temp);
    auto j = jax_rows.find(row.name);
    if (j != jax_rows.end())
      std::printf(" | %9.2f %8.1f %8.2f %6.2fx", j->second[0], j->second[1], gflop, t.median * 1e3 / j->second[0]);
    else
      std::printf(" | %9s %8s %8.2f %7s", "-", "-", gflop, "-");
    std::printf("%s\n", temp > none_temp + 1e-9 ? "  (more temporaries than no checkpoint!)" : "");
    std::fflush(stdout);
  }
  return 0;
}
