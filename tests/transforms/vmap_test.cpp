// vmap: equals a loop over examples, keeps matmuls batched, handles axes
// specifications over pytrees, composes with grad/jvp and itself, runs
// collectives over its named axis, and reports bad input clearly.
#include <catch2/catch.hpp>
#include <map>
#include <cmath>

#include "graft/graft.h"
#include "ir/graph.h"
#include "transforms/rules/batch_rule.h"

using namespace graft;
using Catch::Matchers::Contains;

namespace {

Array grid(int64_t rows, int64_t cols, double scale = 1.0) {
  std::vector<double> v(static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < v.size(); ++i) v[i] = scale * std::sin(0.7 * static_cast<double>(i) + 0.3);
  return array(v, {rows, cols});
}

// Example i of x along axis.
Array example(const Array& x, int64_t i, int axis) { return squeeze(take(x, array({static_cast<int>(i)}), axis), {axis}); }

void check_same(const Array& got, const Array& want, double tol = 1e-12) {
  REQUIRE(got.shape() == want.shape());
  std::vector<double> g = astype(got, f64).to_vector<double>(), w = astype(want, f64).to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i) {
    INFO("element " << i);
    CHECK(g[i] == Approx(w[i]).margin(tol).epsilon(tol));
  }
}

int count_ops(const Graph& g, const char* op) {
  int n = 0;
  for (const auto& node : g.ir().nodes()) n += std::string(ir::op_name(node.op)) == op;
  return n;
}

struct Layer {
  Array w, b;
};

}  // namespace

GRAFT_PYTREE(Layer, w, b);

TEST_CASE("vmap: equals a loop over examples, for any mapped axis", "[vmap]") {
  Array x = grid(3, 4);
  auto f = [](const Array& a) { return sum(graft::sin(a) * a, {0}) + max(a); };
  for (int axis : {0, 1, -1}) {
    INFO("in axis " << axis);
    int norm = axis < 0 ? axis + 2 : axis;
    Array got = vmap(f, axis)(x);
    std::vector<Array> rows;
    for (int64_t i = 0; i < x.shape()[norm]; ++i) rows.push_back(f(example(x, i, norm)));
    check_same(got, stack(rows));
  }
  // out_axes 1 (and -1) puts the mapped axis second.
  auto s = [](const Array& a) { return graft::sin(a) * 2.0; };
  check_same(vmap(s, 0, 1)(x), transpose(s(x)));
  check_same(vmap(s, 1, -1)(x), s(x));
  // An unmapped argument is shared by every example; batch size 1 works too.
  Array w = grid(4, 2);
  auto g = [](const Array& a, const Array& m) { return matmul(graft::tanh(a), m); };
  check_same(vmap(g, Axes{0, none})(x, w), matmul(graft::tanh(x), w));
  check_same(vmap(g, Axes{0, none})(reshape(x[0], {1, 4}), w), matmul(graft::tanh(reshape(x[0], {1, 4})), w));
}

TEST_CASE("vmap: a mapped matmul is one batched dot_general", "[vmap]") {
  Array a = reshape(arange(24, f64), {2, 3, 4}), b = reshape(arange(40, f64), {2, 4, 5});
  Graph g = make_graph(vmap([](const Array& p, const Array& q) { return matmul(p, q); }))(a, b);
  CHECK(count_ops(g, "dot_general") == 1);
  CHECK(g.to_text().find("lhs_batch=(0)") != std::string::npos);
  std::vector<Array> want;
  for (int i = 0; i < 2; ++i) want.push_back(matmul(a[i], b[i]));
  check_same(evaluate(g, {a, b})[0], stack(want));

  Array a4 = reshape(arange(48, f64), {2, 2, 3, 4}), b4 = reshape(arange(80, f64), {2, 2, 4, 5});
  auto mm = [](const Array& p, const Array& q) { return matmul(p, q); };
  Graph gg = make_graph(vmap(vmap(mm)))(a4, b4);
  CHECK(count_ops(gg, "dot_general") == 1);
  check_same(evaluate(gg, {a4, b4})[0], matmul(a4, b4));
}

TEST_CASE("vmap: pytree arguments and outputs with per-leaf axes", "[vmap]") {
  Layer layer{grid(3, 2), reshape(grid(1, 2), {2})};
  Array xs = grid(5, 3);
  auto apply = [](const Layer& l, const Array& x) { return std::make_pair(matmul(x, l.w) + l.b, sum(x)); };
  auto [ys, sums] = vmap(apply, Axes{none, 0}, Axes{0, 0})(layer, xs);
  check_same(ys, matmul(xs, layer.w) + layer.b);
  check_same(sums, sum(xs, {1}));
  // Per-example layers: every leaf of the struct mapped.
  Layer stacked{reshape(arange(12, f64), {2, 3, 2}), reshape(arange(4, f64), {2, 2})};
  Array two = grid(2, 3);
  auto [ys2, s2] = vmap(apply, Axes{0, 0})(stacked, two);
  for (int i = 0; i < 2; ++i) check_same(ys2[i], matmul(two[i], stacked.w[i]) + stacked.b[i]);
  // A nested Axes for the struct's leaves: w mapped, b shared.
  Layer half{stacked.w, layer.b};
  auto [ys3, s3] = vmap(apply, Axes{Axes{0, none}, 0})(half, two);
  for (int i = 0; i < 2; ++i) check_same(ys3[i], matmul(two[i], stacked.w[i]) + layer.b);
  // An output that does not vary is broadcast along the mapped axis.
  check_same(vmap([](const Array&, const Array& m) { return m; }, Axes{0, none})(two, layer.b),
             stack({layer.b, layer.b}));
}

TEST_CASE("vmap: composes with grad, jvp and itself", "[vmap]") {
  Array w = reshape(grid(3, 1), {3});
  Array xs = grid(4, 3), ys = reshape(grid(4, 1), {4});
  auto loss = [](const Array& wt, const Array& x, const Array& y) {
    Array r = sum(x * wt) - y;
    return r * r + sum(graft::sin(wt));
  };
  // Per-example gradients against a loop of grads.
  Array per = vmap(grad(loss), Axes{none, 0, 0})(w, xs, ys);
  for (int64_t i = 0; i < 4; ++i) check_same(per[i], grad(loss)(w, xs[i], ys[i]));
  // grad of a vmapped (summed) loss equals the sum of per-example gradients.
  auto total = [&](const Array& wt) { return sum(vmap(loss, Axes{none, 0, 0})(wt, xs, ys)); };
  check_same(grad(total)(w), sum(per, {0}));
  // vmap of jvp: one directional derivative per tangent.
  Array tangents = grid(2, 3);
  auto dir = [&](const Array& t) { return jvp([&](const Array& a) { return loss(a, xs[0], ys[0]); },
                                              std::make_tuple(w), std::make_tuple(t)).second; };
  Array dirs = vmap(dir)(tangents);
  for (int64_t i = 0; i < 2; ++i) check_same(dirs[i], dir(tangents[i]));
  // vmap of vmap: an outer product.
  Array u = reshape(grid(1, 3), {3}), v = reshape(grid(1, 4, 2.0), {4});
  auto outer = vmap(vmap([](const Array& p, const Array& q) { return p * q; }, Axes{none, 0}), Axes{0, none});
  check_same(outer(u, v), reshape(u, {3, 1}) * reshape(v, {1, 4}));
}

TEST_CASE("vmap: collectives over the named axis", "[vmap][collective]") {
  Array x = grid(4, 3);
  check_same(vmap([](const Array& a) { return a - pmean(a, "b"); }, 0, 0, "b")(x), x - mean(x, {0}, true));
  check_same(vmap([](const Array& a) { return psum(a, "b"); }, 0, none, "b")(x), sum(x, {0}));
  check_same(vmap([](const Array& a) { return pmax(a, "b"); }, 0, none, "b")(x), max(x, {0}));
  check_same(vmap([](const Array&) { return axis_index("b"); }, 0, 0, "b")(x), arange(4));
  check_same(vmap([](const Array& a) { return all_gather(a, "b"); }, 0, none, "b")(x), x);
  // A shift by one example; the first receives nothing (zeros).
  Array shifted = vmap([](const Array& a) { return ppermute(a, "b", {{0, 1}, {1, 2}, {2, 3}}); }, 0, 0, "b")(x);
  check_same(shifted[0], zeros({3}, f64));
  check_same(shifted[2], x[1]);
  // Nested vmaps with two names: normalise over the inner axis only.
  Array cube = reshape(arange(24, f64), {2, 3, 4});
  auto inner = vmap([](const Array& a) { return a / psum(a, "j"); }, 0, 0, "j");
  auto outer = vmap(inner, 0, 0, "i");
  check_same(outer(cube), cube / sum(cube, {1}, true));
}

TEST_CASE("vmap: a wrapper traces every call and batches once per signature", "[vmap][cache]") {
  int traces = 0;
  auto f = vmap([&traces](const Array& a) {
    ++traces;
    return a * 2.0;
  });
  const size_t built = detail::GraphCache::total_traces();
  for (int i = 0; i < 5; ++i) check_same(f(grid(3, 2, i + 1.0)), grid(3, 2, 2.0 * (i + 1)));
  CHECK(traces == 5);  // f runs at every call, so what it closes over is read fresh
  CHECK(detail::GraphCache::total_traces() - built == 1);
  f(grid(4, 2));
  CHECK(detail::GraphCache::total_traces() - built == 2);
}

TEST_CASE("vmap: bad input names the argument and the sizes", "[vmap][errors]") {
  auto add = [](const Array& a, const Array& b) { return a + b; };
  try {
    vmap(add)(grid(3, 2), grid(4, 2));
    FAIL("mismatched sizes were accepted");
  } catch (const ShapeError& e) {
    CHECK_THAT(e.what(), Contains("argument 0") && Contains("argument 1") && Contains("3") && Contains("4"));
  }
  try {
    vmap(add, none)(grid(3, 2), grid(3, 2));
    FAIL("all-none in_axes were accepted");
  } catch (const ShapeError& e) {
    CHECK_THAT(e.what(), Contains("none"));
  }
  try {
    vmap(add, Axes{0, 2})(grid(3, 2), grid(3, 2));
    FAIL("an out-of-range axis was accepted");
  } catch (const ShapeError& e) {
    CHECK_THAT(e.what(), Contains("in_axes 2") && Contains("argument 1"));
  }
  try {
    vmap(add, Axes{0, 0, 0})(grid(3, 2), grid(3, 2));
    FAIL("too many in_axes entries were accepted");
  } catch (const ShapeError& e) {
    CHECK_THAT(e.what(), Contains("3 entries"));
  }
  try {
    vmap(add, 0, none)(grid(3, 2), grid(3, 2));
    FAIL("out_axes none for a mapped output was accepted");
  } catch (const ShapeError& e) {
    CHECK_THAT(e.what(), Contains("out_axes is none"));
  }
  try {
    vmap([](const Array& a) { return psum(a, "nope"); }, 0, 0, "batch")(grid(3, 2));
    FAIL("an unknown axis name was accepted");
  } catch (const ShapeError& e) {
    CHECK_THAT(e.what(), Contains("unbound axis name 'nope'"));
  }
  CHECK_THROWS_AS(psum(grid(3, 2), "batch"), ShapeError);  // no vmap at all
}

