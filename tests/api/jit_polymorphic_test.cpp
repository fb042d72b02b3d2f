// Shape-polymorphic jit: one executable for every size of a symbolic
// dimension, equal to shape-specialised jit at each size; the dimension
// expressions it finds; and the errors of specifications, calls and programs
// that are not one program for every size.
#include <catch2/catch.hpp>
#include <cstdio>
#include <set>

#include "codegen/cpu/compiler.h"
#include "graft/graft.h"
#include "ir/dim_expr.h"
#include "ir/symbolic_graph.h"

using namespace graft;
using Catch::Matchers::Contains;

namespace {

std::vector<double> values(const Array& a) { return astype(a, f64).to_vector<double>(); }

void check_close(const Array& got, const Array& want, double tol) {
  REQUIRE(got.shape() == want.shape());
  std::vector<double> g = values(got), w = values(want);
  for (size_t i = 0; i < g.size(); ++i) CHECK(g[i] == Approx(w[i]).margin(tol).epsilon(tol));
}

struct Mlp {
  Array w1, b1, w2;
};

// A training step's loss: mean over the batch (a division by b) of a two-layer network's squared error.
Array mlp_loss(const Mlp& p, const Array& x, const Array& y) {
  Array h = graft::tanh(matmul(x, p.w1) + p.b1);
  Array d = matmul(h, p.w2) - y;
  return mean(d * d);
}

Array batch(int64_t b, int64_t d, float seed) {
  return graft::sin(reshape(astype(arange(b * d), f32), {b, d}) * 0.37f + seed);
}

// From a polymorphic executable's text after a call at `at` ("b = 3"): how
// many fusion nodes the compiled module runs at that size, of how many, and
// how many it runs at the first sample size.
struct KernelsRun {
  int run = -1, all = -2, module = -3;
};
KernelsRun kernels_run(const std::string& text, const std::string& at) {
  KernelsRun k;
  const size_t pos = text.find("the most recent instance (" + at + "): ");
  REQUIRE(pos != std::string::npos);
  REQUIRE(std::sscanf(text.c_str() + text.find("): ", pos) + 3, "%d of %d", &k.run, &k.all) == 2);
  REQUIRE(std::sscanf(text.c_str(), "backend: cpu (%d fused kernels", &k.module) == 1);
  return k;
}

// A softmax over the sequence axis t of x (b, t, 8), a weighted sum over t,
// a sum over the batch (column sums of t * 8 columns) and one over the
// features (rows of 8): sizes of t sit inside every kernel.
std::tuple<Array, Array, Array> softmax_pools(const Array& x) {
  const Array w = reshape(batch(1, 8, 0.3f), {8});
  Array h = x * w + 0.5f;
  Array e = graft::exp(h - max(h, {1}, true));
  Array s = e / sum(e, {1}, true);
  return std::make_tuple(sum(s * x, {1}), sum(h, {0}), sum(h * h, {2}));
}

}  // namespace

GRAFT_PYTREE(Mlp, w1, b1, w2);

TEST_CASE("polymorphic dimension expressions parse, print and evaluate", "[jit][polymorphic]") {
  std::vector<std::string> syms;
  ir::DimExpr e = ir::parse_dim_expr("2*b + t*b - 3", &syms, "test");
  REQUIRE(syms == std::vector<std::string>{"b", "t"});
  CHECK(e.str(syms) == "2*b + b*t - 3");
  CHECK(e.evaluate({5, 7}) == 10 + 35 - 3);
  CHECK(ir::parse_dim_expr("(b - 1) * 4", &syms, "test").str(syms) == "4*b - 4");
  CHECK_THROWS_WITH(ir::parse_dim_expr("b*b", &syms, "test"), Contains("at most one in each symbol"));
  CHECK_THROWS_WITH(ir::parse_dim_expr("b +", &syms, "test"), Contains("cannot read"));
  CHECK_THROWS_WITH(ir::parse_dim_expr("b / 2", &syms, "test"), Contains("unexpected '/'"));
  std::vector<bool> given;
  auto dims = ir::parse_poly_shape("(b,)", &syms, &given);
  CHECK(dims.size() == 1);
  dims = ir::parse_poly_shape("(2*b, _, 784)", &syms, &given);
  CHECK(dims.size() == 3);
  CHECK(given == std::vector<bool>{false, true, false});
  CHECK(ir::parse_poly_shape("()", &syms, &given).empty());
  CHECK_THROWS_WITH(ir::parse_poly_shape("(b,, 3)", &syms, &given), Contains("empty dimension"));
  ir::DimConstraint c = ir::parse_dim_constraint("t <= 2*b", &syms);
  CHECK(c.holds({3, 6}));
  CHECK_FALSE(c.holds({3, 7}));
  CHECK_THROWS_WITH(ir::parse_dim_constraint("b >= 1 >= 0", &syms), Contains("one comparison"));
}

TEST_CASE("fitting finds each number's expression from the sample graphs", "[jit][polymorphic]") {
  // The corner values of 3 + 2*b + b*t - t at b in {17, 19}, t in {29, 31}, checked at (23, 37).
  auto points = ir::sample_points({17, 29}, {19, 31}, {23, 37});
  REQUIRE(points.size() == 5);
  std::vector<ir::GraphPtr> graphs;
  for (const auto& p : points) {
    auto g = std::make_shared<ir::Graph>();
    const int64_t n = 3 + 2 * p[0] + p[0] * p[1] - p[1];
    ir::ValueId x = g->add_input(ir::ValueType{DType::f32, {n, 5}});
    g->set_outputs({x});
    graphs.push_back(g);
  }
  ir::SymbolicGraph s = ir::fit_symbolic_graph(graphs, points, {"b", "t"});
  CHECK(s.symbolic_count == 1);
  auto dims = ir::symbolic_value_dims(s);
  REQUIRE(dims.size() == 1);
  CHECK(ir::symbolic_type_str(DType::f32, dims[0].second, s.symbols) == "f32[2*b - t + b*t + 3,5]");
  ir::GraphPtr at = ir::instantiate(s, {4, 6});
  CHECK(at->type(at->inputs()[0]).shape == Shape{3 + 8 + 24 - 6, 5});
  // b // 2 is no such polynomial: refused, naming what it saw.
  for (size_t i = 0; i < points.size(); ++i) {
    auto g = std::make_shared<ir::Graph>();
    ir::ValueId x = g->add_input(ir::ValueType{DType::f32, {points[i][0] / 2}});
    g->set_outputs({x});
    graphs[i] = g;
  }
  CHECK_THROWS_WITH(ir::fit_symbolic_graph(graphs, points, {"b", "t"}), Contains("8 at b = 17, t = 29"));
}

TEST_CASE("polymorphic jit: a training step compiles once for every batch size", "[jit][polymorphic]") {
  const int64_t D = 12, H = 16, O = 3;
  Mlp p{batch(D, H, 0.1f) * 0.3f, reshape(batch(1, H, 0.2f), {H}) * 0.1f, batch(H, O, 0.3f) * 0.3f};
  auto step = value_and_grad(mlp_loss);
  for (Backend backend : {Backend::interpreter, Backend::cpu}) {
    INFO("backend " << (backend == Backend::cpu ? "cpu" : "interpreter"));
    JitOptions opts{.backend = backend,
                    .wait_for_compile = true,
                    .polymorphic_shapes = {"(12, 16)", "(16,)", "(16, 3)", "(b, 12)", "(b, 3)"}};
    auto poly = jit(step, opts);
    auto fixed = jit(step, {.backend = backend, .wait_for_compile = true});
    size_t traces = 0;
    int64_t compiles = 0;
    for (int64_t b : {5, 1, 2, 3, 64, 17, 100, 257, 5}) {
      INFO("b = " << b);
      Array x = batch(b, D, 0.5f), y = batch(b, O, 0.7f);
      if (traces) compiles = codegen::cpu::compile_stats().compiles;
      auto [loss, grads] = poly(p, x, y);
      // A new size compiles nothing (the module loads once, at the first call).
      if (traces) CHECK(codegen::cpu::compile_stats().compiles == compiles);
      auto [want_loss, want_grads] = fixed(p, x, y);
      check_close(loss, want_loss, 1e-5);
      check_close(grads.w1, want_grads.w1, 1e-5);
      check_close(grads.b1, want_grads.b1, 1e-5);
      check_close(grads.w2, want_grads.w2, 1e-5);
      if (traces == 0) traces = poly.trace_count();
      CHECK(poly.cache_size() == 1);
      CHECK(poly.trace_count() == traces);  // no new trace for a new size
    }
    CHECK(traces == 3);  // one symbol: 2 + 1 sample sizes, traced once
    CHECK(fixed.cache_size() == 8);
    if (backend != Backend::cpu) continue;
    // The compiled module's kernels serve every size, 1 included (where the
    // emitter would drop the axis and write another source).
    auto compiled = jit(step, opts).lower(p, batch(4, D, 0.5f), batch(4, O, 0.7f)).compile();
    for (int64_t b : {1, 2, 300}) {
      INFO("b = " << b);
      Array x = batch(b, D, 0.5f), y = batch(b, O, 0.7f);
      check_close(compiled(p, x, y).first, fixed(p, x, y).first, 1e-5);
      const std::string text = compiled.as_text();
      INFO(text);
      // module: fusion nodes the module runs at the first sample size (the others it refuses at any size).
      const KernelsRun k = kernels_run(text, "b = " + std::to_string(b));
      CHECK(k.run == k.module);
      CHECK(k.module >= 2);
    }
  }
}

TEST_CASE("polymorphic jit: two symbols, flattening (b, t, d) into (b*t, d)", "[jit][polymorphic]") {
  Array w = batch(8, 4, 0.9f);
  auto f = [w](const Array& x) {
    const int64_t b = x.shape()[0], t = x.shape()[1];
    Array flat = reshape(x, {b * t, 8});
    Array y = reshape(matmul(flat, w), {b, t, 4});
    return sum(graft::exp(y * 0.1f), {1}) / static_cast<float>(t);  // a division by t
  };
  auto poly = jit(f, {.backend = Backend::interpreter, .polymorphic_shapes = {"(b, t, 8)", "t >= 2"}});
  for (auto [b, t] : std::vector<std::pair<int64_t, int64_t>>{{1, 2}, {3, 5}, {7, 2}, {2, 40}}) {
    INFO("b = " << b << ", t = " << t);
    Array x = reshape(batch(b * t, 8, 0.4f), {b, t, 8});
    check_close(poly(x), f(x), 1e-5);
  }
  CHECK(poly.trace_count() == 5);  // 2^2 corners and one check
  CHECK(poly.cache_size() == 1);
  CHECK_THROWS_WITH(poly(reshape(batch(3, 8, 0.4f), {3, 1, 8})), Contains("breaks the constraint 't >= 2'"));
  // The executable's text shows the symbolic dimensions.
  auto lowered = poly.lower(reshape(batch(6, 8, 0.f), {2, 3, 8}));
  std::string text = lowered.compile().as_text();
  CHECK_THAT(text, Contains("polymorphic in b, t (each >= 1, t >= 2)"));
  CHECK_THAT(text, Contains("%0:f32[b,t,8]"));
  CHECK_THAT(text, Contains(":f32[b*t,8] = reshape"));
  CHECK_THAT(text, Contains(":f32[b,4] = fusion"));
  // The traced graph too, in text and in JSON (which reads back with its symbols).
  const Graph traced = lowered.graph();
  CHECK_THAT(traced.to_text(), Contains("%0:f32[b,t,8]"));
  const std::string json = traced.to_json();
  CHECK_THAT(json, Contains("\"symbolic\""));
  CHECK_THAT(json, Contains("\"b*t\""));
  const Graph back = Graph::from_json(json);
  CHECK(back.to_text() == traced.to_text());
  CHECK(back.to_json() == json);
  // Malformed symbolic dimensions are refused with their JSON path.
  auto with = [&](const std::string& from, const std::string& to) {
    std::string j = json;
    const size_t at = j.find(from);
    REQUIRE(at != std::string::npos);
    return Graph::from_json(j.replace(at, from.size(), to));
  };
  CHECK_THROWS_WITH(with("\"b*t\"", "\"b*q\""), Contains("does not list"));
  CHECK_THROWS_WITH(with("\"b*t\"", "\"b*b\""), Contains("at most one in each symbol"));
  CHECK_THROWS_WITH(with("\"t >= 2\"", "\"t >=\""), Contains("$.graph.symbolic.constraints[0]"));
  CHECK_THROWS_WITH(with("\"version\": 6", "\"version\": 5"), Contains("came in version 6"));
}

TEST_CASE("polymorphic jit: kernels over symbolic axes that are not the outermost compile once", "[jit][polymorphic]") {
  auto f = softmax_pools;
  const JitOptions opts{.backend = Backend::cpu, .wait_for_compile = true, .polymorphic_shapes = {"(b, t, 8)"}};
  auto compiled = jit(f, opts).lower(reshape(batch(6, 8, 0.f), {2, 3, 8})).compile();
  auto fixed = jit(f, {.backend = Backend::cpu, .wait_for_compile = true});
  // Modules compiled or loaded from the disk cache (an earlier run of the tests may have compiled them).
  auto modules_made = [] { return codegen::cpu::compile_stats().compiles + codegen::cpu::compile_stats().disk_hits; };
  int64_t made = modules_made();
  // b = 1 drops the batch axis from every kernel: a form of the program the module lacks, whose own module
  // is made once (for any t); the other sizes run the first sample's module.
  for (auto [b, t] : std::vector<std::pair<int64_t, int64_t>>{{3, 5}, {2, 40}, {5, 300}, {1, 7}, {1, 9}, {64, 2}}) {
    INFO("b = " << b << ", t = " << t);
    Array x = reshape(batch(b * t, 8, 0.4f), {b, t, 8});
    auto [pooled, columns, rows] = compiled(x);
    if (b == 1 && t == 7) {
      CHECK(modules_made() == made + 1);
      made = modules_made();
    }
    CHECK(modules_made() == made);  // nothing compiled for the polymorphic executable's new size
    auto [want_pooled, want_columns, want_rows] = fixed(x);
    // The same kernels at these sizes: the same bits.
    CHECK(values(pooled) == values(want_pooled));
    CHECK(values(columns) == values(want_columns));
    CHECK(values(rows) == values(want_rows));
    const std::string text = compiled.as_text();
    INFO(text);
    const KernelsRun k = kernels_run(text, "b = " + std::to_string(b) + ", t = " + std::to_string(t));
    CHECK(k.module == 3);      // of 4: the softmax's maximum is a fusion the emitter refuses at any size
    CHECK(k.run == k.module);  // every kernel the module has runs compiled at this size
    CHECK_THAT(text, Contains(b == 1 ? "its own module" : "; the first sample's module\n"));
  }
}

TEST_CASE("polymorphic jit: clear errors for specifications and calls", "[jit][polymorphic]") {
  auto f = [](const Array& x, const Array& y) { return sum(x, {1}) + y; };
  Array x = batch(4, 3, 0.f), y = reshape(batch(1, 4, 0.f), {4});
  auto bad = [&](std::vector<std::string> spec) { return jit(f, {.polymorphic_shapes = std::move(spec)})(x, y); };
  CHECK_THROWS_WITH(bad({"(b, 3)"}), Contains("gives 1 shapes, but the function is called with 2"));
  CHECK_THROWS_WITH(bad({"(b, 3, 1)", "(b,)"}), Contains("has 3 dimensions"));
  CHECK_THROWS_WITH(bad({"(b, 3)", "(b,"}), Contains("not closed"));
  CHECK_THROWS_WITH(bad({"(4, 3)", "(4,)"}), Contains("names no symbol"));
  CHECK_THROWS_WITH(bad({"(b, 3)", "(b,)", "t >= 2"}), Contains("'t' appears in a constraint but in no"));
  CHECK_THROWS_WITH(bad({"(b, 5)", "(b,)"}), Contains("needs dimension 1 to be 5"));
  CHECK_THROWS_WITH(bad({"(b, 3)", "(b,)", "b >= 1", "b <= 2"}), Contains("breaks the constraint 'b <= 2'"));
  CHECK_THROWS_WITH(bad({"(b, 3)", "(b,)", "b >= 4", "b <= 5"}), Contains("fewer than three sizes"));
  auto jf = jit(f, {.polymorphic_shapes = {"(b, 3)", "(b,)"}});
  CHECK(values(jf(x, y)) == values(f(x, y)));
  // Shapes that disagree on b, and a wrong rank: errors naming the leaf and its shape.
  CHECK_THROWS_WITH(jf(batch(5, 3, 0.f), y), Contains("argument leaf 1 has shape [4]"));
  CHECK_THROWS_WITH(jf(batch(5, 3, 0.f), y), Contains("needs dimension 0 to be b = 5"));
  CHECK_THROWS_WITH(jf(x, batch(4, 1, 0.f)), Contains("argument leaf 1 has shape [4,1]"));
  CHECK_THROWS_AS(jf(x, batch(4, 1, 0.f)), ShapeError);
}

TEST_CASE("polymorphic jit refuses functions that are not one program for every size", "[jit][polymorphic]") {
  // Code branching on a dimension builds different ops at different sizes.
  auto branches = [](const Array& x) { return x.shape()[0] > 18 ? graft::exp(x) : graft::sin(x); };
  CHECK_THROWS_WITH(jit(branches, {.polymorphic_shapes = {"(b,)"}})(full({4}, 1.0f)),
                    Contains("builds a different program"));
  // A size that is not a polynomial of degree one in b.
  auto halves = [](const Array& x) { return slice(x, {0, 0}, {x.shape()[0] / 2, 4}); };
  CHECK_THROWS_WITH(jit(halves, {.polymorphic_shapes = {"(b, 4)"}})(full({4, 4}, 1.0f)),
                    Contains("not a sum of products of distinct symbols"));
  // A constant array whose size depends on b.
  auto table = [](const Array& x) {
    const int64_t n = x.shape()[0];
    return x + array(std::vector<float>(static_cast<size_t>(n), 0.5f), {n});
  };
  CHECK_THROWS_WITH(jit(table, {.polymorphic_shapes = {"(b,)"}})(full({4}, 1.0f)),
                    Contains("builds a different program"));
}

TEST_CASE("polymorphic jit: a size no sample met is checked, and runs the function's own program",
          "[jit][polymorphic]") {
  // Branches the samples (17, 19, 23) never take: past 1000, and at 1 (a squeeze). Without the check at each
  // new size, b = 2000 and b = 1 would silently run the samples' program (x * 3, no squeeze).
  auto body = [](const Array& x) {
    const int64_t b = x.shape()[0];
    if (b == 1) return reshape(x, {4}) * 5.0f;
    return b > 1000 ? x * 2.0f : x * 3.0f;
  };
  int traces = 0;
  auto f = [&](const Array& x) {
    ++traces;
    return body(x);
  };
  auto poly = jit(f, {.polymorphic_shapes = {"(b, 4)"}});
  std::set<int64_t> seen;
  for (int64_t b : {5, 2000, 1, 7, 2000, 1, 5}) {
    INFO("b = " << b);
    Array x = batch(b, 4, 0.3f);
    const int before = traces;
    Array y = poly(x);
    // The samples at the first call; then f once more at each new size (the check), never again there.
    CHECK(traces == before + (seen.empty() ? 3 : 0) + (seen.count(b) ? 0 : 1));
    seen.insert(b);
    check_close(y, body(x), 0);
  }
  CHECK(poly.cache_size() == 1);
  CHECK(poly.trace_count() == 3);  // the traces the executable was made from
  // Ahead of time too: the compiled executable checks f at each new size.
  auto compiled = poly.lower(batch(5, 4, 0.3f)).compile();
  for (int64_t b : {2000, 1, 7}) {
    INFO("compiled, b = " << b);
    Array x = batch(b, 4, 0.3f);
    check_close(compiled(x), body(x), 0);
  }
  CHECK_THAT(compiled.as_text(), Contains("2 sizes run an executable of their own"));
}

// Each trace makes its own callback objects; they are not a difference in
// the program, so one executable (the first trace's callback) serves every
// size. (Each new size ran an executable of its own, kept without bound.)
TEST_CASE("polymorphic jit: a host callback does not make each size its own program", "[jit][polymorphic][callback]") {
  int64_t calls = 0, rows_seen = 0;
  auto f = [&](const Array& x) {
    Array y = x * 2.0f;
    io_callback([&](const Array& v) { ++calls, rows_seen += v.shape()[0]; }, std::tuple<>{}, ordered, y);
    return sum(y, {1});
  };
  auto compiled = jit(f, {.polymorphic_shapes = {"(b, 4)"}}).lower(batch(5, 4, 0.3f)).compile();
  int64_t rows = 0;
  for (int64_t b : {3, 8, 21, 2, 40}) {
    INFO("b = " << b);
    const Array x = batch(b, 4, 0.3f);
    check_close(compiled(x), sum(x * 2.0f, {1}), 1e-6);
    rows += b;
  }
  CHECK(calls == 5);
  CHECK(rows_seen == rows);
  CHECK_THAT(compiled.as_text(), !Contains("of their own"));
}

TEST_CASE("polymorphic jit: a training step updating Ref arguments, for any batch", "[jit][polymorphic][ref]") {
  for (Backend backend : {Backend::interpreter, Backend::cpu}) {
    INFO("backend " << (backend == Backend::cpu ? "cpu" : "interpreter"));
    Ref w = new_ref(batch(8, 4, 0.1f) * 0.3f);
    Ref m = new_ref(zeros({8, 4}));
    auto step = jit(
        [](const Ref& wr, const Ref& mr, const Array& x, const Array& y) {
          auto loss = [&](const Array& v) { return mean(square(matmul(x, v) - y)); };
          mr.set(mr.get() * 0.9f + grad(loss)(wr.get()));
          wr.addupdate(-0.1f * mr.get());
          return loss(wr.get());
        },
        {.backend = backend, .wait_for_compile = true, .polymorphic_shapes = {"(8, 4)", "(8, 4)", "(b, 8)", "(b, 4)"}});
    const void* w_at = w.unsafe_buffer_pointer();
    Array w_want = w.get(), m_want = m.get();
    for (int64_t b : {16, 3, 1, 40, 3}) {
      INFO("b = " << b);
      Array x = batch(b, 8, 0.5f), y = batch(b, 4, 0.7f);
      Array got = step(w, m, x, y);
      // The same step functionally, eagerly.
      auto loss = [&](const Array& v) { return mean(square(matmul(x, v) - y)); };
      m_want = m_want * 0.9f + grad(loss)(w_want);
      w_want = w_want - 0.1f * m_want;
      check_close(w.get(), w_want, 1e-5);
      check_close(m.get(), m_want, 1e-5);
      check_close(got, loss(w_want), 1e-5);
      CHECK(w.unsafe_buffer_pointer() == w_at);  // updated where its elements are
    }
    CHECK(step.cache_size() == 1);
  }
}

namespace {
void check_pmap_inside() {
  const int64_t n = static_cast<int64_t>(devices().size());
  auto f = [](const Array& x) {
    return pmap([](const Array& v) { return psum(sum(graft::exp(v * 0.5f), {0}), "i") + mean(v); }, "i")(x);
  };
  for (Backend backend : {Backend::interpreter, Backend::cpu}) {
    INFO("backend " << (backend == Backend::cpu ? "cpu" : "interpreter"));
    auto poly = jit(
        f, {.backend = backend, .wait_for_compile = true, .polymorphic_shapes = {"(" + std::to_string(n) + ", b, 3)"}});
    for (int64_t b : {5, 2, 30, 1}) {
      INFO("b = " << b);
      Array x = reshape(batch(n * b, 3, 0.2f), {n, b, 3});
      check_close(poly(x), f(x), 1e-5);
    }
    CHECK(poly.cache_size() == 1);
    CHECK(poly.trace_count() == 3);
  }
}
}  // namespace

TEST_CASE("polymorphic jit with pmap inside: the replicas' bodies at every size", "[jit][polymorphic]") {
  check_pmap_inside();
}

// In pmap_test.cpp's child with four host devices.
TEST_CASE("pmap 4: polymorphic jit with pmap inside, over four devices", "[.pmap4]") {
  REQUIRE(devices().size() == 4);
  check_pmap_inside();
}

TEST_CASE("polymorphic jit: iota, slices, concatenation and padding follow the symbol", "[jit][polymorphic]") {
  auto f = [](const Array& x) {
    const int64_t b = x.shape()[0];
    Array ramp = astype(arange(b), f32);          // an iota of b elements
    Array both = concatenate({x, x * ramp}, 0);   // 2*b
    Array inner = slice(both, {1}, {2 * b - 1});  // 2*b - 2
    return sum(inner * inner) + graft::max(ramp);
  };
  auto jf = jit(f, {.backend = Backend::interpreter, .polymorphic_shapes = {"(b,)", "b >= 2"}});
  for (int64_t b : {2, 3, 9, 40}) {
    Array x = graft::cos(astype(arange(b), f32));
    check_close(jf(x), f(x), 1e-5);
  }
  CHECK(jf.trace_count() == 3);
}

TEST_CASE("polymorphic jit on the CUDA backend: one set of kernels for every size", "[cuda_devices][polymorphic]") {
  if (devices("cuda").empty()) return;
  const int64_t D = 12, H = 16, O = 3;
  Mlp p{batch(D, H, 0.1f) * 0.3f, reshape(batch(1, H, 0.2f), {H}) * 0.1f, batch(H, O, 0.3f) * 0.3f};
  auto step = value_and_grad(mlp_loss);
  auto poly = jit(
      step, {.backend = Backend::cuda, .polymorphic_shapes = {"(12, 16)", "(16,)", "(16, 3)", "(b, 12)", "(b, 3)"}});
  auto fixed = jit(step, {.backend = Backend::interpreter});
  int64_t compiles = 0;
  for (int64_t b : {5, 1, 40, 17, 300}) {
    INFO("b = " << b);
    Array x = batch(b, D, 0.5f), y = batch(b, O, 0.7f);
    compiles = codegen::cpu::compile_stats().compiles;  // the emulated driver compiles with it
    auto [loss, grads] = poly(p, x, y);
    // A new size compiles no kernel: a batch is not part of a generated CUDA kernel's source. (A size
    // of 1, where the emitter drops the axis, compiles its own kernels once.)
    if (b != 5 && b != 1) CHECK(codegen::cpu::compile_stats().compiles == compiles);
    auto [want_loss, want_grads] = fixed(p, x, y);
    check_close(loss, want_loss, 1e-5);
    check_close(grads.w1, want_grads.w1, 1e-5);
    check_close(grads.b1, want_grads.b1, 1e-5);
    check_close(grads.w2, want_grads.w2, 1e-5);
  }
  CHECK(poly.trace_count() == 3);

  // A symbol on an inner axis: the kernels take their sizes as parameters, so a new t compiles nothing
  // once its form (b = 1 drops an axis) has compiled.
  auto seq = jit(softmax_pools, {.backend = Backend::cuda, .polymorphic_shapes = {"(b, t, 8)"}});
  auto seq_host = jit(softmax_pools, {.backend = Backend::interpreter});
  for (auto [b, t] : std::vector<std::pair<int64_t, int64_t>>{{3, 5}, {2, 40}, {5, 300}, {1, 7}, {1, 9}, {64, 2}}) {
    INFO("b = " << b << ", t = " << t);
    Array x = reshape(batch(b * t, 8, 0.4f), {b, t, 8});
    // Modules compiled or loaded from the disk cache (an earlier run of the tests may have compiled them).
    const auto& stats = codegen::cpu::compile_stats;
    const int64_t made = stats().compiles + stats().disk_hits;
    auto [pooled, columns, rows] = seq(x);
    if (!(b == 3 && t == 5) && !(b == 1 && t == 7)) CHECK(stats().compiles + stats().disk_hits == made);
    auto [want_pooled, want_columns, want_rows] = seq_host(x);
    check_close(pooled, want_pooled, 1e-5);
    check_close(columns, want_columns, 1e-5);
    check_close(rows, want_rows, 1e-5);
  }
}

TEST_CASE("polymorphic jit of vmap(grad): per-example gradients for any batch", "[jit][polymorphic]") {
  Array w = batch(6, 2, 0.3f);
  auto per_example =
      vmap(grad([](const Array& wi, const Array& x) { return sum(graft::tanh(matmul(x, wi))); }), Axes{none, 0});
  auto jf =
      jit(per_example, {.backend = Backend::cpu, .wait_for_compile = true, .polymorphic_shapes = {"(6, 2)", "(b, 6)"}});
  for (int64_t b : {3, 1, 50}) {
    INFO("b = " << b);
    Array x = batch(b, 6, 0.8f);
    Array got = jf(w, x);
    REQUIRE(got.shape() == Shape{b, 6, 2});
    check_close(got, per_example(w, x), 1e-5);
  }
  CHECK(jf.cache_size() == 1);
  CHECK(jf.trace_count() == 3);
}
