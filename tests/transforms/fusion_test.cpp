// jit's fusion pass and the interpreter's tiled evaluator: what fuses into
// how many kernels, that fused graphs stay valid and acyclic, and that they
// compute what the unfused graphs compute (bit for bit for elementwise work,
// and independently of the number of threads).
#include <omp.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <random>
#include <set>

#include "graft/graft.h"
#include "interpreter/kernel.h"
#include "ir/builder.h"
#include "ir/dtype.h"
#include "ir/graph.h"
#include "transforms/fusion.h"
#include "transforms/simplify.h"

using namespace graft;
using Catch::Matchers::Contains;

namespace {

// These tests are about the interpreter's tiled evaluator (tests/api/jit_cpu_test.cpp covers Backend::cpu).
const JitOptions kInterpreter{.backend = Backend::interpreter};

Array randn(Shape shape, uint32_t seed, DType dtype = f32) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> dist;
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = dist(gen);
  return astype(array(v, std::move(shape)), dtype);
}

struct Fused {
  Graph simplified, fused;
  transforms::FusionStats stats;
};

// make_graph, simplify (as jit does), then fuse; the fused graph must verify.
template <class F, class... Args>
Fused fuse_of(F f, const Args&... args) {
  Graph g = make_graph(f)(args...);
  Fused r;
  r.simplified = Graph(transforms::simplify(g.ir()).graph);
  r.fused = Graph(transforms::fuse(r.simplified.ir(), &r.stats));
  r.fused.verify();  // topological order, types, and every body
  return r;
}

int count(const Graph& g, ir::Op op) {
  int n = 0;
  for (const ir::Node& node : g.ir().nodes()) n += node.op == op;
  return n;
}

std::vector<const ir::Node*> kernels(const Graph& g) {
  std::vector<const ir::Node*> out;
  for (const ir::Node& node : g.ir().nodes())
    if (node.op == ir::Op::fusion) out.push_back(&node);
  return out;
}

const ir::Graph& body(const ir::Node& n) { return *std::get<ir::Graphs>(*n.attrs.find("body"))[0]; }

int body_ops(const ir::Node& n) {
  int k = 0;
  for (const ir::Node& b : body(n).nodes()) k += b.op != ir::Op::constant;
  return k;
}

std::vector<double> values(const Array& a) { return astype(a, f64).to_vector<double>(); }

// Bitwise equality of every output (NaNs included).
void same_bits(const std::vector<Array>& got, const std::vector<Array>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    REQUIRE(got[k].shape() == want[k].shape());
    REQUIRE(got[k].dtype() == want[k].dtype());
    std::vector<double> a = values(got[k]), b = values(want[k]);
    for (size_t i = 0; i < a.size(); ++i) {
      INFO("output " << k << " element " << i << ": " << a[i] << " vs " << b[i]);
      if (std::isnan(b[i])) CHECK(std::isnan(a[i]));
      else CHECK(a[i] == b[i]);
    }
  }
}

void close(const std::vector<Array>& got, const std::vector<Array>& want, double rel) {
  REQUIRE(got.size() == want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    REQUIRE(got[k].shape() == want[k].shape());
    std::vector<double> a = values(got[k]), b = values(want[k]);
    for (size_t i = 0; i < a.size(); ++i) {
      INFO("output " << k << " element " << i);
      CHECK(a[i] == Approx(b[i]).epsilon(rel).margin(rel));
    }
  }
}

template <class... Args>
std::vector<Array> run(const Graph& g, const Args&... args) {
  return evaluate(g, std::vector<Array>{args...});
}

}  // namespace

TEST_CASE("fusion: an 8-op elementwise chain is one kernel", "[jit][fusion]") {
  auto f = [](const Array& x, const Array& y) {
    return graft::cos(graft::sin(x) * y + x) - graft::exp(y) * graft::tanh(x);  // 8 ops
  };
  Array x = randn({64, 33}, 1), y = randn({64, 33}, 2);
  Fused r = fuse_of(f, x, y);
  CHECK(r.simplified.num_nodes() == 8);
  CHECK(r.fused.num_nodes() == 1);
  CHECK(r.stats.kernels == 1);
  CHECK(r.stats.ops_fused == 8);
  REQUIRE(kernels(r.fused).size() == 1);
  CHECK(body_ops(*kernels(r.fused)[0]) == 8);
  same_bits(run(r.fused, x, y), run(r.simplified, x, y));
  // Large enough for many tiles on several threads.
  Array bx = randn({300, 1000}, 3), by = randn({300, 1000}, 4);
  Fused big = fuse_of(f, bx, by);
  CHECK(big.fused.num_nodes() == 1);
  same_bits(run(big.fused, bx, by), run(big.simplified, bx, by));
  same_bits({jit(f, kInterpreter)(bx, by)}, {f(bx, by)});
}

TEST_CASE("fusion: every element takes the unfused kernel's formula, whatever the length", "[jit][fusion]") {
  // Scratch slots of a short space are as aligned as output buffers: Eigen's
  // packet path covers the elements whose packet is aligned in the destination,
  // so a slot misaligned by 8 bytes (an odd length's f64-sized slot) moved
  // element 1015 of 1017 to the scalar exp (found by tests/api/jit_tiers_test.cpp).
  auto f = [](const Array& x) { return graft::exp(graft::sin(x) * 2.0f + x) - x * 0.5f; };
  // Odd lengths: a few tail elements each, where scalar and packet formulas often differ.
  for (int64_t n = 1; n < 1200; n += 26) {
    INFO("n = " << n);
    Array x = randn({n}, static_cast<uint32_t>(n));
    same_bits({jit(f, kInterpreter)(x)}, {f(x)});
  }
}

TEST_CASE("fusion: a graph out of topological order is sorted first", "[jit][fusion]") {
  Array x = randn({64}, 11);
  Fused sorted = fuse_of([](const Array& a) { return sum(exp(sin(a) * a)); }, x);
  // The same nodes, last first: fuse must not read a value before its producer is placed.
  ir::Graph reversed = sorted.simplified.ir();
  std::reverse(reversed.mutable_nodes().begin(), reversed.mutable_nodes().end());
  Graph fused(transforms::fuse(reversed, nullptr));
  fused.verify();
  CHECK(kernels(fused).size() == kernels(sorted.fused).size());
  same_bits(run(fused, x), run(sorted.fused, x));

  // A cycle cannot be sorted: the error names it.
  ir::Graph cyclic = sorted.simplified.ir();
  auto& nodes = cyclic.mutable_nodes();
  REQUIRE(nodes.size() >= 2);
  nodes.front().inputs[0] = nodes.back().outputs[0];
  CHECK_THROWS_AS(transforms::fuse(cyclic, nullptr), GraphFormatError);
}

TEST_CASE("fusion: a dot in the middle splits the chain", "[jit][fusion]") {
  auto f = [](const Array& x, const Array& w) {
    Array a = graft::tanh(graft::sin(x) * x + x);   // sin, mul, add, tanh
    Array d = matmul(a, w);
    return graft::exp(d) * d - graft::sin(d);       // exp, mul, sin, sub
  };
  Array x = randn({16, 8}, 5), w = randn({8, 8}, 6);
  Fused r = fuse_of(f, x, w);
  CHECK(kernels(r.fused).size() == 2);
  CHECK(count(r.fused, ir::Op::dot_general) == 1);
  CHECK(r.fused.num_nodes() == 3);
  for (const ir::Node* k : kernels(r.fused)) CHECK(body_ops(*k) == 4);
  same_bits(run(r.fused, x, w), run(r.simplified, x, w));
  same_bits({jit(f, kInterpreter)(x, w)}, {f(x, w)});
}

TEST_CASE("fusion: a trailing reduction joins, what follows starts a kernel", "[jit][fusion]") {
  auto ends = [](const Array& x) { return sum(graft::exp(x) * x, {1}); };
  Array x = randn({40, 50}, 7);
  Fused r = fuse_of(ends, x);
  CHECK(r.fused.num_nodes() == 1);
  REQUIRE(kernels(r.fused).size() == 1);
  CHECK(body_ops(*kernels(r.fused)[0]) == 3);  // exp, mul, reduce_sum
  same_bits(run(r.fused, x), run(r.simplified, x));

  auto after = [](const Array& x) { return graft::sin(sum(graft::exp(x) * x, {1})) * 2.0f; };
  Fused s = fuse_of(after, x);
  auto ks = kernels(s.fused);
  REQUIRE(ks.size() == 2);
  CHECK(body_ops(*ks[0]) == 3);
  CHECK(body_ops(*ks[1]) == 3);  // sin, broadcast of the constant 2, mul
  CHECK(s.stats.constants_duplicated == 1);
  CHECK(count(s.fused, ir::Op::constant) == 0);  // copied into the body
  same_bits(run(s.fused, x), run(s.simplified, x));
  same_bits({jit(after, kInterpreter)(x)}, {after(x)});
}

TEST_CASE("fusion: a diamond is one kernel", "[jit][fusion]") {
  auto f = [](const Array& x) {
    Array a = graft::sin(x);
    Array b = graft::exp(a), c = graft::cos(a);
    return b + c;
  };
  Array x = randn({1000}, 8);
  Fused r = fuse_of(f, x);
  CHECK(r.fused.num_nodes() == 1);
  CHECK(r.stats.ops_fused == 4);
  same_bits(run(r.fused, x), run(r.simplified, x));
}

TEST_CASE("fusion: a value read by a dot and by later elementwise ops", "[jit][fusion]") {
  // sin(x) feeds the dot and cos(.) * sin(.); the group returns both sin and
  // the product; the final add reads the dot, so it cannot join that group.
  auto f = [](const Array& x, const Array& w) {
    Array a = graft::sin(x);
    Array d = matmul(a, w);
    Array e = graft::cos(a) * a;
    return e + d;
  };
  Array x = randn({8, 8}, 9), w = randn({8, 8}, 10);
  Fused r = fuse_of(f, x, w);
  auto ks = kernels(r.fused);
  REQUIRE(ks.size() == 1);
  CHECK(body_ops(*ks[0]) == 3);
  CHECK(ks[0]->outputs.size() == 2);  // a multi-output kernel
  CHECK(r.stats.merges_refused >= 1);
  CHECK(r.fused.num_nodes() == 3);  // the kernel, the dot, the add
  same_bits(run(r.fused, x, w), run(r.simplified, x, w));
  same_bits({jit(f, kInterpreter)(x, w)}, {f(x, w)});

  // When the later ops read the dot, the fusion stops before them.
  auto g = [](const Array& x, const Array& w) {
    Array a = graft::sin(x);
    Array d = matmul(a, w);
    return graft::exp(a + d) * a;
  };
  Fused s = fuse_of(g, x, w);
  s.fused.verify();
  CHECK(count(s.fused, ir::Op::dot_general) == 1);
  same_bits(run(s.fused, x, w), run(s.simplified, x, w));
}

TEST_CASE("fusion: a cycle through another group is refused", "[jit][fusion]") {
  // s = sin(x) and m = exp(sort(cos(z))) each start a group; b1 = sort(s) * 2 + cos(z)
  // joins cos(z)'s group, so that group sits between s and m: s -> sort -> {cos z, b1}
  // -> sort -> m. Merging s's and m's groups for s + m would be a cycle even though
  // no path in the original graph leads from s to m.
  auto f = [](const Array& x, const Array& z) {
    Array s = graft::sin(x);
    Array c = graft::cos(z);
    Array b1 = sort(s) * 2.0f + c;
    Array m = graft::exp(sort(c));
    return std::make_pair(s + m, b1);
  };
  Array x = randn({6, 5}, 11), z = randn({6, 5}, 12);
  Graph g = make_graph(f)(x, z);
  transforms::FusionStats stats;
  Graph fused(transforms::fuse(g.ir(), &stats));
  fused.verify();
  CHECK(stats.merges_refused >= 1);
  same_bits(evaluate(fused, {x, z}), evaluate(g, {x, z}));
}

TEST_CASE("fusion: kernel counts of known graphs", "[jit][fusion]") {
  Array x = randn({32, 100}, 13);
  // softmax: max (reads x alone, stays a plain reduction), then {broadcast,
  // sub, exp, sum} returning exp and sum, then {broadcast, div}.
  auto softmax = [](const Array& x) {
    Array m = max(x, {1}, true);
    Array e = graft::exp(x - m);
    return e / sum(e, {1}, true);
  };
  Fused s = fuse_of(softmax, x);
  auto ks = kernels(s.fused);
  REQUIRE(ks.size() == 2);
  CHECK(ks[0]->outputs.size() == 2);
  CHECK(count(s.fused, ir::Op::reduce_max) == 1);
  close(run(s.fused, x), run(s.simplified, x), 1e-6);
  close({jit(softmax, kInterpreter)(x)}, {softmax(x)}, 1e-6);

  // A layer: matmul, bias (a broadcast of a smaller operand) and gelu-ish tail.
  auto layer = [](const Array& x, const Array& w, const Array& b) {
    Array h = matmul(x, w) + b;
    return h * graft::logistic(h * 1.702f);
  };
  Array w = randn({100, 64}, 14), b = randn({64}, 15);
  Fused l = fuse_of(layer, x, w, b);
  CHECK(kernels(l.fused).size() == 1);
  CHECK(l.fused.num_nodes() == 2);  // dot, kernel
  same_bits(run(l.fused, x, w, b), run(l.simplified, x, w, b));

  // Different iteration spaces do not fuse: a row-vector op stays apart.
  auto spaces = [](const Array& x, const Array& v) { return x * 2.0f + graft::exp(v * 3.0f); };
  Array v = randn({100}, 16);
  Fused p = fuse_of(spaces, x, v);
  CHECK(kernels(p.fused).size() == 2);
  same_bits(run(p.fused, x, v), run(p.simplified, x, v));

  // Nothing to fuse: single ops stay plain nodes.
  Fused one = fuse_of([](const Array& x) { return graft::sin(x); }, x);
  CHECK(kernels(one.fused).empty());
  CHECK(one.fused.num_nodes() == 1);
}

TEST_CASE("fusion: reductions of every shape, tiled and deterministic", "[jit][fusion][slow]") {
  struct Case {
    Shape shape;
    std::vector<int> axes;
  };
  // Rows short and long (one row across many work items), columns narrow and
  // wider than a tile, a middle axis, everything, unit axes, and reduced axes
  // that are not neighbours (the materialising path).
  const std::vector<Case> cases = {{{64, 300}, {1}},      {{3, 200000}, {1}},  {{200000}, {0}},   {{5000, 40}, {0}},
                                   {{300, 9000}, {0}},    {{7, 3000, 20}, {1}}, {{7, 1, 30}, {1}}, {{40, 30, 20}, {0, 2}},
                                   {{1, 5, 1}, {0, 2}},   {{2, 3}, {0, 1}}};
  for (const Case& c : cases) {
    INFO("shape " << c.shape.size() << "-d, first dim " << c.shape[0]);
    Array x = randn(c.shape, 17, f64);
    auto f = [&](const Array& x) {
      Array t = graft::exp(x * 0.5) - x;
      return std::make_tuple(sum(t, c.axes), max(t, c.axes), t);
    };
    Fused r = fuse_of(f, x);
    REQUIRE(kernels(r.fused).size() == 1);
    CHECK(kernels(r.fused)[0]->outputs.size() == 3);
    std::vector<Array> want = run(r.simplified, x);
    std::vector<Array> got = run(r.fused, x);
    close(got, want, 1e-12);
    same_bits({got[1], got[2]}, {want[1], want[2]});  // max and the elementwise part: exact
    // The same on one thread: results do not depend on the thread count.
    int threads = omp_get_max_threads();
    omp_set_num_threads(1);
    std::vector<Array> serial = run(r.fused, x);
    omp_set_num_threads(threads);
    same_bits(serial, got);
  }
  // An f32 sum of a million elements is cut into blocks combined in order:
  // close to the sequential sum, and no further from the exact (f64) one.
  Array big = randn({1 << 20}, 18);
  auto total = [](const Array& x) { return sum(x * x); };
  Fused t = fuse_of(total, big);
  const double exact = total(astype(big, f64)).item<double>();
  const double blocked = run(t.fused, big)[0].item<double>(), sequential = run(t.simplified, big)[0].item<double>();
  CHECK(blocked == Approx(sequential).epsilon(1e-3));
  CHECK(std::fabs(blocked - exact) <= std::fabs(sequential - exact));
  CHECK(jit(total, kInterpreter)(big).item<double>() == blocked);
}

TEST_CASE("fusion: broadcasts, selects, conversions and integer types", "[jit][fusion]") {
  Array x = randn({50, 70}, 19), row = randn({70}, 20), col = randn({50, 1}, 21);
  auto f = [](const Array& x, const Array& row, const Array& col) {
    Array y = x * row + col;                                // broadcasts of smaller operands
    Array k = maximum(astype(y * 10.0f, i32) * 3, arange(70) - 20);  // integer ops, a broadcast i32 row
    Array z = where(y > 0.0f, y, astype(k, f32));           // select, comparison
    return std::make_tuple(astype(z, f64) * 0.5, k, y > col);  // conversions, bool output
  };
  Fused r = fuse_of(f, x, row, col);
  CHECK(!kernels(r.fused).empty());
  same_bits(run(r.fused, x, row, col), run(r.simplified, x, row, col));
  auto jf = jit(f, kInterpreter);
  auto [a, b, c] = jf(x, row, col);
  auto [ea, eb, ec] = f(x, row, col);
  same_bits({a, b, c}, {ea, eb, ec});

  // A scalar predicate, and a kernel of one element.
  auto g = [](const Array& p, const Array& x) { return where(p, graft::sin(x), graft::cos(x)) * 2.0f; };
  Array p = array<bool>({true}), s = randn({1}, 22);
  Fused q = fuse_of(g, reshape(p, {}), x);
  same_bits(run(q.fused, reshape(p, {}), x), run(q.simplified, reshape(p, {}), x));
  Fused q1 = fuse_of(g, reshape(p, {}), reshape(s, {}));
  same_bits(run(q1.fused, reshape(p, {}), reshape(s, {})), run(q1.simplified, reshape(p, {}), reshape(s, {})));
}

TEST_CASE("fusion: the kernel is safe when an output shares an operand's memory", "[jit][fusion]") {
  // Two outputs from one operand: o0 = x + 1 (written over x), o1 = x * 3
  // (read after o0 is computed within the same tile).
  using namespace graft::ir;
  const int64_t n = 20000;
  GraphBuilder b;
  ValueId x = b.input({DType::f32, {n}});
  ValueId one = b.add1(Op::broadcast_in_dim, {b.add1(Op::constant, {}, {{"value", std::make_shared<const Literal>(Literal{{DType::f32, {}}, {0, 0, 0x80, 0x3f}})}})},
                       {{"shape", Ints{n}}, {"broadcast_dimensions", Ints{}}});
  ValueId o0 = b.add1(Op::add, {x, one});
  ValueId o1 = b.add1(Op::mul, {x, b.add1(Op::add, {one, b.add1(Op::add, {one, one})})});
  GraphPtr body = b.finish({o0, o1});
  std::vector<float> data(static_cast<size_t>(n)), second(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) data[static_cast<size_t>(i)] = static_cast<float>(i) * 0.25f;
  const std::vector<float> original = data;
  ValueType t{DType::f32, {n}};
  Attrs attrs{{"body", Graphs{body}}};
  graft::interpreter::run_kernel(
      graft::interpreter::KernelCall{Op::fusion, attrs, {{&t, data.data()}}, {{&t, data.data()}, {&t, second.data()}}});
  for (size_t i = 0; i < data.size(); ++i) {
    CHECK(data[i] == original[i] + 1.0f);
    CHECK(second[i] == original[i] * 3.0f);
  }
}

TEST_CASE("fusion: a reduction written over a smaller operand goes through a temporary", "[jit][fusion]") {
  // s = sum(x - broadcast(m), axis 1), with s written over m's buffer while
  // other rows still read m.
  using namespace graft::ir;
  const int64_t rows = 300, cols = 200;
  GraphBuilder b;
  ValueId x = b.input({DType::f64, {rows, cols}});
  ValueId m = b.input({DType::f64, {rows}});
  ValueId bm = b.add1(Op::broadcast_in_dim, {m}, {{"shape", Ints{rows, cols}}, {"broadcast_dimensions", Ints{0}}});
  ValueId sum = b.add1(Op::reduce_sum, {b.add1(Op::sub, {x, bm})}, {{"axes", Ints{1}}});
  GraphPtr body = b.finish({sum});
  std::vector<double> xs(static_cast<size_t>(rows * cols)), ms(static_cast<size_t>(rows)), want(static_cast<size_t>(rows));
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = std::sin(static_cast<double>(i));
  for (size_t r = 0; r < ms.size(); ++r) ms[r] = static_cast<double>(r);
  ValueType tx{DType::f64, {rows, cols}}, tm{DType::f64, {rows}};
  Attrs attrs{{"body", Graphs{body}}};
  using graft::interpreter::KernelCall;
  graft::interpreter::run_kernel(KernelCall{Op::fusion, attrs, {{&tx, xs.data()}, {&tm, ms.data()}}, {{&tm, want.data()}}});
  graft::interpreter::run_kernel(KernelCall{Op::fusion, attrs, {{&tx, xs.data()}, {&tm, ms.data()}}, {{&tm, ms.data()}}});
  CHECK(ms == want);
  double row0 = 0;
  for (int64_t j = 0; j < cols; ++j) row0 += xs[static_cast<size_t>(j)];
  CHECK(want[0] == Approx(row0));
}

TEST_CASE("fusion: a body the tiled path cannot run is evaluated as a graph", "[jit][fusion]") {
  // A reshape of an operand smaller than the space, then a broadcast: not a
  // body the fusion pass makes, but any valid body runs.
  using namespace graft::ir;
  GraphBuilder b;
  ValueId v = b.input({DType::f32, {4}});
  ValueId x = b.input({DType::f32, {2, 4, 3}});
  ValueId r = b.add1(Op::reshape, {v}, {{"new_sizes", Ints{1, 4}}});
  ValueId bv = b.add1(Op::broadcast_in_dim, {r}, {{"shape", Ints{2, 4, 3}}, {"broadcast_dimensions", Ints{0, 1}}});
  GraphPtr body = b.finish({b.add1(Op::mul, {x, bv})});
  GraphBuilder outer;
  ValueId ov = outer.input({DType::f32, {4}}), ox = outer.input({DType::f32, {2, 4, 3}});
  graft::Graph g(outer.finish(outer.add(Op::fusion, {ov, ox}, {{"body", Graphs{body}}})));
  g.verify();
  Array av = randn({4}, 26), ax = randn({2, 4, 3}, 27);
  same_bits(evaluate(g, {av, ax}), evaluate(graft::Graph(body), {av, ax}));
}

TEST_CASE("fusion: donated state is still updated in place", "[jit][fusion][donation]") {
  // p - 0.1 * (g * g + 1): the update's last op writes over p; what feeds it fuses.
  auto step = jit([](const Array& p, const Array& g) { return p - (g * g + 1.0f) * 0.1f; }, {.donate_argnums = {0}, .backend = Backend::interpreter});
  Array p = randn({1000}, 24), g = randn({1000}, 25);
  std::vector<double> want = values(p - (g * g + 1.0f) * 0.1f);
  const void* before = p.unsafe_buffer_pointer();
  Array q = step(p, g);
  CHECK(q.unsafe_buffer_pointer() == before);
  CHECK(values(q) == want);
  auto text = jit([](const Array& p, const Array& g) { return p - (g * g + 1.0f) * 0.1f; }, {.donate_argnums = {0}, .backend = Backend::interpreter})
                  .lower(randn({1000}, 24), g)
                  .compile()
                  .as_text();
  CHECK_THAT(text, Contains("fusion: 1 kernel"));
  CHECK_THAT(text, Contains("donation: input 0 backs output 0"));
}

TEST_CASE("fusion: jit shows its kernels", "[jit][fusion]") {
  auto f = [](const Array& x) { return graft::cos(graft::sin(x) * x + 1.0f); };
  Array x = randn({100}, 23);
  auto compiled = jit(f).lower(x).compile();
  const std::string text = compiled.as_text();
  CHECK_THAT(text, Contains("fusion: 1 kernel"));
  CHECK_THAT(text, Contains("kernel 0: fusion of 5 ops (sin, mul, broadcast_in_dim, add, cos)"));
  CHECK_THAT(text, Contains("= fusion"));
  same_bits({compiled(x)}, {f(x)});
  // The interpreter backend fuses too; flops count the fused ops.
  auto interp = jit(f, {.backend = Backend::interpreter}).lower(x).compile();
  CHECK_THAT(interp.as_text(), Contains("kernel 0: fusion"));
  CHECK(interp.cost_analysis().flops >= 4 * 100);
}

TEST_CASE("fusion: scalar constants read by unfused nodes come first", "[jit][fusion]") {
  // Regression: slots ignore edges from scalar constants (they are copied
  // into bodies), so after a renumbering a dot reading one could sort before
  // it. The gradient of a small MLP's loss has that shape.
  auto loss = [](const Array& w1, const Array& w2, const Array& x) {
    Array h = graft::tanh(matmul(x, w1) + 1.0f);
    Array logits = matmul(h, w2);
    return -mean(sum(log_softmax(logits, {-1}), {-1}));
  };
  Array w1 = randn({5, 4}, 31), w2 = randn({4, 3}, 32), x = randn({2, 5}, 33);
  auto vg = value_and_grad<0, 1>(loss);
  auto [v, g] = vg(w1, w2, x);
  for (Backend backend : {Backend::interpreter, Backend::cpu}) {
    auto [jv, jg] = jit(vg, {.backend = backend, .wait_for_compile = true})(w1, w2, x);
    CHECK(jv.item<float>() == Approx(v.item<float>()).epsilon(1e-6));
    close({std::get<0>(jg), std::get<1>(jg)}, {std::get<0>(g), std::get<1>(g)}, 1e-5);
  }
}

TEST_CASE("fusion: complex arithmetic joins groups, transcendental functions and complex sums do not",
          "[jit][fusion]") {
  auto f = [](const Array& z, const Array& w) {
    const Array a = z * w + conj(z);  // 3 ops: one group with what follows
    return std::make_tuple(real(a * 2.0f) + imag(exp(a)), sum(a));
  };
  const Array z = complex(randn({8, 5}, 1), randn({8, 5}, 2)), w = complex(randn({8, 5}, 3), randn({8, 5}, 4));
  Graph g = make_graph(f)(z, w);
  const ir::GraphPtr simplified = transforms::simplify(g.ir()).graph;
  Graph fused(transforms::fuse(*simplified));
  fused.verify();
  CHECK(count(fused, ir::Op::exp) == 1);         // outside every group
  CHECK(count(fused, ir::Op::reduce_sum) == 1);  // a complex sum: its parts' two sums, in the reduce kernel
  REQUIRE(!kernels(fused).empty());
  int complex_ops_fused = 0;
  for (const ir::Node* k : kernels(fused))
    for (const ir::Node& n : body(*k).nodes()) complex_ops_fused += n.op == ir::Op::mul || n.op == ir::Op::conj;
  CHECK(complex_ops_fused >= 2);
  // It evaluates to the unfused graph's values.
  const std::vector<Array> want = run(Graph(simplified), z, w);
  for (const Graph* h : {&fused}) {
    const std::vector<Array> got = run(*h, z, w);
    for (size_t k = 0; k < want.size(); ++k) {
      if (ir::is_complex(want[k].dtype())) {
        same_bits({real(got[k]), imag(got[k])}, {real(want[k]), imag(want[k])});
      } else {
        same_bits({got[k]}, {want[k]});
      }
    }
  }
}
