// jit's memory planner: values alive at the same time never share bytes,
// dead values' bytes are reused, outputs take a dying operand's block in
// place only where that is safe, and running with the plan computes what
// running without it computes.
#include <catch2/catch.hpp>
#include <cstring>
#include <random>

#include "codegen/memory_plan.h"
#include "graft/graft.h"
#include "interpreter/evaluate.h"
#include "ir/builder.h"
#include "ir/dtype.h"
#include "runtime/device.h"
#include "runtime/platform_allocator.h"
#include "transforms/fusion.h"

using namespace graft;
using ir::Op;
using ir::ValueId;

namespace {

int64_t bytes_of(const ir::Graph& g, ValueId v) {
  const ir::ValueType& t = g.type(v);
  return t.num_elements() * static_cast<int64_t>(ir::dtype_size(t.dtype));
}

// Checks the plan against the graph's live ranges: alignment, bounds, and
// no two values alive together sharing a byte unless one took the other's
// block in place at the node where it died.
void check_plan(const ir::Graph& g, const codegen::MemoryPlan& plan) {
  const auto& nodes = g.nodes();
  std::vector<int64_t> def(g.value_id_bound(), -1), last(g.value_id_bound(), -1);
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (ValueId v : nodes[i].inputs) last[v] = static_cast<int64_t>(i);
    for (ValueId v : nodes[i].outputs) def[v] = static_cast<int64_t>(i);
  }
  std::vector<ValueId> placed;
  for (ValueId v = 0; v < static_cast<ValueId>(g.value_id_bound()); ++v) {
    if (plan.offset[v] < 0) continue;
    placed.push_back(v);
    CHECK(plan.offset[v] % 64 == 0);
    CHECK(plan.offset[v] + bytes_of(g, v) <= plan.arena_bytes);
    last[v] = std::max(last[v], def[v]);
  }
  for (ValueId v : g.inputs()) CHECK(plan.offset[v] == -1);
  for (ValueId v : g.outputs()) CHECK(plan.offset[v] == -1);
  for (size_t a = 0; a < placed.size(); ++a)
    for (size_t b = a + 1; b < placed.size(); ++b) {
      ValueId u = placed[a], v = placed[b];
      if (def[u] > def[v]) std::swap(u, v);
      const bool overlap_in_time = def[v] <= last[u];
      const bool overlap_in_bytes =
          plan.offset[u] < plan.offset[v] + bytes_of(g, v) && plan.offset[v] < plan.offset[u] + bytes_of(g, u);
      if (!overlap_in_time || !overlap_in_bytes) continue;
      // Allowed only in place: v made by the node where u dies, over u's own block.
      INFO("values " << u << " and " << v);
      CHECK(last[u] == def[v]);
      CHECK(plan.offset[u] == plan.offset[v]);
    }
}

// A random graph of unfusable (dot_general) and elementwise ops over a few
// square matrices, each reading earlier values.
ir::GraphPtr random_graph(std::mt19937& gen, int n_nodes) {
  ir::GraphBuilder b;
  const ir::ValueType t{DType::f32, {8, 8}};
  std::vector<ValueId> vals{b.input(t), b.input(t)};
  auto pick = [&] { return vals[std::uniform_int_distribution<size_t>(0, vals.size() - 1)(gen)]; };
  for (int i = 0; i < n_nodes; ++i) {
    switch (std::uniform_int_distribution<int>(0, 4)(gen)) {
      case 0:
        vals.push_back(b.add1(Op::dot_general, {pick(), pick()},
                              {{"lhs_contracting", ir::Ints{1}}, {"rhs_contracting", ir::Ints{0}},
                               {"lhs_batch", ir::Ints{}}, {"rhs_batch", ir::Ints{}}}));
        break;
      case 1: vals.push_back(b.add1(Op::tanh, {pick()})); break;
      case 2: vals.push_back(b.add1(Op::add, {pick(), pick()})); break;
      case 3: vals.push_back(b.add1(Op::mul, {pick(), pick()})); break;
      default: vals.push_back(b.add1(Op::reduce_sum, {b.add1(Op::sin, {pick()})}, {{"axes", ir::Ints{1}}})); vals.pop_back();
               vals.push_back(b.add1(Op::cos, {pick()}));
    }
  }
  return b.finish({vals.back(), vals[vals.size() / 2]});
}

std::vector<runtime::BufferPtr> random_inputs(const ir::Graph& g, std::mt19937& gen) {
  std::vector<runtime::BufferPtr> ins;
  std::normal_distribution<float> dist(0.f, 0.3f);
  for (ValueId v : g.inputs()) {
    auto buf = runtime::make_buffer(static_cast<size_t>(bytes_of(g, v)));
    auto* p = static_cast<float*>(buf->data());
    for (int64_t i = 0; i < bytes_of(g, v) / 4; ++i) p[i] = dist(gen);
    ins.push_back(buf);
  }
  return ins;
}

bool same_bytes(const runtime::BufferPtr& a, const runtime::BufferPtr& b) {
  return a->size() == b->size() && std::memcmp(a->data(), b->data(), a->size()) == 0;
}

}  // namespace

TEST_CASE("memory plan: random graphs, fused and not, plan soundly and compute the same", "[codegen][memory_plan]") {
  std::mt19937 gen(7);
  int64_t in_place = 0, reused = 0;
  for (int trial = 0; trial < 200; ++trial) {
    ir::GraphPtr g = random_graph(gen, 4 + trial % 24);
    for (ir::GraphPtr graph : {g, transforms::fuse(*g)}) {
      codegen::MemoryPlan plan = codegen::plan_memory(*graph);
      check_plan(*graph, plan);
      CHECK(plan.arena_bytes <= plan.sum_bytes);
      in_place += plan.in_place;
      reused += plan.arena_bytes < plan.sum_bytes;
      std::vector<runtime::BufferPtr> ins = random_inputs(*graph, gen);
      std::vector<runtime::BufferPtr> want = interpreter::evaluate(*graph, ins);
      interpreter::EvaluateOptions options;
      options.arena_offsets = &plan.offset;
      options.arena_bytes = plan.arena_bytes;
      std::vector<runtime::BufferPtr> got = interpreter::evaluate(*graph, ins, options);
      REQUIRE(got.size() == want.size());
      for (size_t k = 0; k < got.size(); ++k) CHECK(same_bytes(got[k], want[k]));
    }
  }
  CHECK(in_place > 100);  // the property above was exercised
  CHECK(reused > 100);
}

TEST_CASE("memory plan: a chain of products keeps two blocks, a fused tail runs in place", "[codegen][memory_plan]") {
  // x @ w, four times, then an elementwise tail: two 16 KiB blocks suffice
  // (the product being read and the one being written); the fused tail
  // (tanh(d) * 2 + 1) writes over the last product, which dies there.
  auto f = [](const Array& x, const Array& w) {
    Array d = x;
    for (int i = 0; i < 5; ++i) d = matmul(d, w);
    return sum(tanh(d) * 2.0f + 1.0f);
  };
  Array x = ones({64, 64}), w = eye(64) * 0.5f;
  auto compiled = jit(f, JitOptions{.backend = Backend::interpreter}).lower(x, w).compile();
  const int64_t block = 64 * 64 * 4;
  CHECK(compiled.memory_analysis().temp_bytes == 2 * block);
  CHECK_THAT(compiled.as_text(), Catch::Matchers::Contains("temporaries: 5 values in one arena of 32768 bytes (81920 unplanned, 0 in place)"));

  auto g = [](const Array& x, const Array& w) { return sum(tanh(matmul(x, w)) * 2.0f); };
  auto cg = jit(g, JitOptions{.backend = Backend::interpreter}).lower(x, w).compile();
  CHECK_THAT(cg.as_text(), Catch::Matchers::Contains("(1 in place)") || Catch::Matchers::Contains("arena of 16384 bytes"));

  // During a call, the device holds the arguments, one arena and the output.
  runtime::Device device("cpu", 92, std::make_unique<runtime::PlatformAllocator>());
  runtime::DeviceScope on(device);
  Array xd = x + 0.0f, wd = w + 0.0f;
  auto jf = jit(f, JitOptions{.backend = Backend::interpreter});
  float first = jf(xd, wd).item<float>();
  device.allocator().reset_peak();
  const int64_t base = device.memory_stats().bytes_in_use;
  float again = jf(xd, wd).item<float>();
  CHECK(again == first);
  CHECK(device.memory_stats().peak_bytes_in_use - base == 2 * block + 64);  // arena + the f32[] result
  CHECK(first == Approx(f(x, w).item<float>()));
}

// One scalar used in k fusions a product apart is one node after CSE; its
// broadcast must be copied into each fusion, not written out by the first
// and read back by the others. The plan with one shared 0.5 equals the plan
// with k different constants (which CSE cannot merge).
TEST_CASE("memory plan: a scalar shared by 2..4 fusions is never a kernel output", "[codegen][memory_plan]") {
  const Array x = ones({256, 256});
  const Array w = ones({256, 256}) * 0.01f;
  for (int k = 2; k <= 4; ++k) {
    auto chain = [k](bool shared) {
      return [k, shared](const Array& a, const Array& b) {
        Array y = tanh(a * (shared ? 0.5f : 0.5f));
        for (int i = 1; i < k; ++i) y = tanh(matmul(y, b) * (shared ? 0.5f : 0.5f / float(1 << i)));
        return y;
      };
    };
    auto with_shared = jit(chain(true)).lower(x, w).compile();
    auto with_distinct = jit(chain(false)).lower(x, w).compile();
    INFO("k = " << k << "\n" << with_shared.as_text());
    const MemoryAnalysis shared = with_shared.memory_analysis();
    const MemoryAnalysis distinct = with_distinct.memory_analysis();
    CHECK(shared.temp_bytes == distinct.temp_bytes);
    // Each product's operand is the only array a fused kernel hands on: at
    // most one f32[256,256] temporary alive at a time besides the product's.
    CHECK(shared.temp_bytes <= 2 * 256 * 256 * 4);
    // And it computes what the interpreter computes.
    const std::vector<float> got = with_shared(x, w).to_vector<float>();
    const std::vector<float> want = chain(true)(x, w).to_vector<float>();
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); i += 97) CHECK(got[i] == Approx(want[i]).epsilon(1e-5).margin(1e-6));
  }
}
