// jit's recomputation pass after fusion (transforms/fusion_recompute.h):
// which fused outputs it stops writing, that the graphs it makes verify and
// compute what the fused graph computed bit for bit (the same operations on
// the same values), and what it saves in a training step's memory plan.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <tuple>
#include <utility>
#include <vector>

#include "codegen/cuda/node_kernels.h"
#include "codegen/memory_plan.h"
#include "graft/graft.h"
#include "ir/graph.h"
#include "support/arrays.h"
#include "support/cuda_devices.h"
#include "transforms/fusion.h"
#include "transforms/fusion_recompute.h"
#include "transforms/simplify.h"

using namespace graft;
using graft::test::randn;

namespace {

struct Passes {
  Graph fused, recomputed;
  transforms::RecomputeStats stats;
};

// make_graph, simplify and fuse (as jit does), then the pass; both graphs must verify.
template <class F, class... Args>
Passes passes_of(F f, const Args&... args) {
  const Graph g = make_graph(f)(args...);
  Passes p;
  p.fused = Graph(transforms::fuse(*transforms::simplify(g.ir()).graph));
  p.recomputed = Graph(transforms::recompute_fused_outputs(p.fused.ir(), &p.stats));
  p.fused.verify();
  p.recomputed.verify();
  return p;
}

// Bytes the fused kernels write, summed over their outputs.
int64_t fusion_output_bytes(const Graph& g) {
  int64_t bytes = 0;
  for (const ir::Node& node : g.ir().nodes())
    if (node.op == ir::Op::fusion)
      for (ir::ValueId v : node.outputs) bytes += g.ir().type(v).num_elements() * 4;
  return bytes;
}

void same_bits(const std::vector<Array>& got, const std::vector<Array>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    const std::vector<float> a = got[k].to_vector<float>(), b = want[k].to_vector<float>();
    REQUIRE(a.size() == b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      INFO("output " << k << " element " << i);
      CHECK(std::memcmp(&a[i], &b[i], sizeof(float)) == 0);
    }
  }
}

// A GELU layer's loss: its forward kernel computes tanh and its neighbours, which the backward kernel reads.
Array gelu_loss(const Array& x, const Array& w1, const Array& w2) {
  return sum(square(matmul(nn::gelu(matmul(x, w1)), w2)));
}

}  // namespace

TEST_CASE("fusion recompute: a GELU's backward kernel recomputes what its forward one wrote",
          "[jit][fusion][recompute]") {
  const Array x = randn({64, 32}, 1), w1 = randn({32, 128}, 2), w2 = randn({128, 16}, 3);
  auto step = [](const Array& x, const Array& w1, const Array& w2) {
    auto [value, g] = value_and_grad<1, 2>(gelu_loss)(x, w1, w2);
    return std::make_tuple(value, std::get<0>(g), std::get<1>(g));
  };
  const Passes p = passes_of(step, x, w1, w2);
  // Fused outputs of the forward GELU kernel: the backward kernel reads them; now it reads the product
  // x @ w1 (materialised anyway, a GEMM's result) and recomputes them.
  CHECK(p.stats.outputs_dropped >= 2);
  CHECK(p.stats.bytes_dropped >= 2 * 64 * 128 * 4);
  CHECK(fusion_output_bytes(p.recomputed) + p.stats.bytes_dropped == fusion_output_bytes(p.fused));
  same_bits(evaluate(p.recomputed, {x, w1, w2}), evaluate(p.fused, {x, w1, w2}));
  // And jit (which runs the pass) on each backend equals the unfused step.
  for (Backend backend : {Backend::interpreter, Backend::cpu}) {
    const auto got = jit(step, JitOptions{.backend = backend})(x, w1, w2);
    const auto want = step(x, w1, w2);
    CHECK(std::abs(std::get<0>(got).item<float>() - std::get<0>(want).item<float>()) <=
          1e-5f * std::abs(std::get<0>(want).item<float>()));
    for (const auto& [a, b] : {std::pair{std::get<1>(got), std::get<1>(want)}, {std::get<2>(got), std::get<2>(want)}})
      CHECK(max(abs(a - b)).item<float>() <= 1e-4f * max(abs(b)).item<float>());
  }
}

TEST_CASE("fusion recompute: a step's planned temporaries shrink", "[jit][fusion][recompute]") {
  const Array x = randn({64, 32}, 4), w1 = randn({32, 128}, 5), w2 = randn({128, 16}, 6);
  auto step = [](const Array& x, const Array& w1, const Array& w2) {
    return value_and_grad<1, 2>(gelu_loss)(x, w1, w2).second;
  };
  const Passes p = passes_of(step, x, w1, w2);
  REQUIRE(p.stats.outputs_dropped > 0);
  // The arena the executable's plan needs: at least one f32[64,128] less (values that were alive at once).
  const int64_t before = codegen::plan_memory(p.fused.ir()).arena_bytes;
  const int64_t after = codegen::plan_memory(p.recomputed.ir()).arena_bytes;
  INFO("arena " << before << " -> " << after << " bytes");
  CHECK(after <= before - 64 * 128 * 4);
}

TEST_CASE("fusion recompute: what stays written", "[jit][fusion][recompute]") {
  const Array x = randn({64, 128}, 7), w = randn({128, 128}, 8);
  SECTION("a value a plain node reads (a dot) stays an output") {
    auto f = [](const Array& x, const Array& w) {
      const Array t = graft::tanh(x * 2.0f);
      return std::make_tuple(matmul(t, w), t * x + 1.0f);
    };
    const Passes p = passes_of(f, x, w);
    CHECK(p.stats.outputs_dropped == 0);
    same_bits(std::vector<Array>{evaluate(p.recomputed, {x, w})}, std::vector<Array>{evaluate(p.fused, {x, w})});
  }
  SECTION("a graph output stays an output") {
    auto f = [](const Array& x, const Array& w) {
      const Array t = graft::tanh(x * 2.0f);
      const Array y = matmul(t, w);
      return std::make_tuple(t, y * t);
    };
    const Passes p = passes_of(f, x, w);
    CHECK(p.stats.outputs_dropped == 0);
  }
  SECTION("a value recomputed from leaves that would cost more reads stays an output") {
    // s is written for the dot; t, in s's kernel, is read only by the kernel after the dot (which cannot
    // join s's: it reads the dot). Recomputing t = s * a + b * c there would read s, a, b and c (four
    // arrays) instead of t: t stays. t = s * 2 + 1 reads s alone: it goes.
    const Array a = randn({64, 128}, 9), b = randn({64, 128}, 10), c = randn({64, 128}, 11);
    auto costly = [](const Array& x, const Array& w, const Array& a, const Array& b, const Array& c) {
      const Array s = graft::tanh(x * 3.0f), t = s * a + b * c;
      return graft::exp(matmul(s, w)) * t;
    };
    const Passes kept = passes_of(costly, x, w, a, b, c);
    CHECK(kept.stats.outputs_dropped == 0);
    auto cheap = [](const Array& x, const Array& w) {
      const Array s = graft::tanh(x * 3.0f), t = s * 2.0f + 1.0f;
      return graft::exp(matmul(s, w)) * t;
    };
    const Passes dropped = passes_of(cheap, x, w);
    CHECK(dropped.stats.outputs_dropped == 1);
    CHECK(dropped.stats.bytes_dropped == 64 * 128 * 4);
    same_bits(evaluate(dropped.recomputed, {x, w}), evaluate(dropped.fused, {x, w}));
  }
}

TEST_CASE("fusion recompute: the GELU step on a CUDA device (emulated under ctest)", "[cuda_devices]") {
  if (test::gpus().empty()) return;
  const Array x = randn({64, 32}, 12), w1 = randn({32, 128}, 13), w2 = randn({128, 16}, 14);
  auto step = [](const Array& x, const Array& w1, const Array& w2) {
    return value_and_grad<1, 2>(gelu_loss)(x, w1, w2).second;
  };
  REQUIRE(passes_of(step, x, w1, w2).stats.outputs_dropped > 0);  // the bodies the device compiles are rewritten
  const codegen::cuda::CudaRunCounts before = codegen::cuda::run_counts();
  const auto got = jit(step, JitOptions{.backend = Backend::cuda})(x, w1, w2);
  CHECK(codegen::cuda::run_counts().launches > before.launches);  // generated kernels ran on the device
  const auto want = step(x, w1, w2);
  for (const auto& [a, b] : {std::pair{std::get<0>(got), std::get<0>(want)}, {std::get<1>(got), std::get<1>(want)}})
    CHECK(max(abs(a - b)).item<float>() <= 1e-4f * max(abs(b)).item<float>());
}
