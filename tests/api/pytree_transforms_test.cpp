// Every pytree container kind through every transform: a matrix whose
// cells check values against closed forms, not only that they compile.
// f(c) = sum_i (i+1) * sum(sin(leaf_i)) and h(c) = sin of every leaf, so
// d f / d leaf_i = (i+1) cos(leaf_i), and d h_i / d leaf_j is diag(cos) when
// i == j and zero otherwise.
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "graft/graft.h"

using namespace graft;

namespace {

struct Params {
  Array w;
  Array b;
};

}  // namespace

GRAFT_PYTREE(Params, w, b);

namespace {

using Pair = std::pair<Array, Array>;
using Tuple = std::tuple<Array, Array, Array>;
using Arr = std::array<Array, 2>;
using Vec = std::vector<Array>;
using Map = std::map<std::string, Array>;
using Nested = std::tuple<std::pair<Array, std::vector<Array>>, std::map<std::string, std::tuple<Array>>>;

// A tree of type C whose leaf i is [0.1 (i+1) + shift, -0.2 (i+1) + 0.05] (times `rows` rows when rows > 0).
template <class C>
C sample(int rows = 0, double shift = 0.0);

template <class C>
C fill(C like, int rows, double shift) {
  std::vector<Array> leaves = tree::leaves(like);
  for (size_t i = 0; i < leaves.size(); ++i) {
    double k = static_cast<double>(i + 1);
    std::vector<double> v;
    for (int r = 0; r < std::max(rows, 1); ++r) {
      v.push_back(0.1 * k + shift + 0.3 * r);
      v.push_back(-0.2 * k + 0.05 - 0.1 * r);
    }
    leaves[i] = rows > 0 ? array(v, {rows, 2}) : array(v, {2});
  }
  return tree::unflatten(like, leaves);
}

template <class C>
C sample(int rows, double shift) {
  Array z;
  if constexpr (std::is_same_v<C, Pair>) return fill(Pair{z, z}, rows, shift);
  else if constexpr (std::is_same_v<C, Tuple>) return fill(Tuple{z, z, z}, rows, shift);
  else if constexpr (std::is_same_v<C, Arr>) return fill(Arr{z, z}, rows, shift);
  else if constexpr (std::is_same_v<C, Vec>) return fill(Vec{z, z, z}, rows, shift);
  else if constexpr (std::is_same_v<C, Map>) return fill(Map{{"a", z}, {"b", z}}, rows, shift);
  else if constexpr (std::is_same_v<C, Params>) return fill(Params{z, z}, rows, shift);
  else return fill(Nested{{z, {z, z}}, {{"p", std::tuple<Array>{z}}, {"q", std::tuple<Array>{z}}}}, rows, shift);
}

template <class C>
Array f(const C& c) {
  std::vector<Array> leaves = tree::leaves(c);
  Array total = scalar(0.0, f64);
  for (size_t i = 0; i < leaves.size(); ++i) total = total + sum(graft::sin(leaves[i])) * static_cast<double>(i + 1);
  return total;
}

template <class C>
C h(const C& c) {
  return tree::map([](const Array& a) { return graft::sin(a); }, c);
}

double item(const Array& a) { return a.item<double>(); }

// The leaves of got equal those of want, leaf by leaf (same count and shapes).
void check_leaves(const std::vector<Array>& got, const std::vector<Array>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("leaf " << i);
    REQUIRE(got[i].shape() == want[i].shape());
    std::vector<double> g = astype(got[i], f64).to_vector<double>(), w = astype(want[i], f64).to_vector<double>();
    for (size_t k = 0; k < g.size(); ++k) CHECK(g[k] == Approx(w[k]).margin(1e-12));
  }
}

template <class C>
std::vector<Array> expected_grad(const C& c) {
  std::vector<Array> leaves = tree::leaves(c);
  for (size_t i = 0; i < leaves.size(); ++i) leaves[i] = graft::cos(leaves[i]) * static_cast<double>(i + 1);
  return leaves;
}

Array sin_of(const Array& a) { return graft::sin(a); }
Array cos_of(const Array& a) { return graft::cos(a); }

template <class C>
std::vector<Array> mapped(const C& c, Array (*op)(const Array&)) {
  std::vector<Array> leaves = tree::leaves(c);
  for (Array& a : leaves) a = op(a);
  return leaves;
}

// The blocks of d h / d c in out-leaf-major order: diag(cos(leaf_i)) on the
// diagonal, zeros off it; or, for d^2 f / d c^2, diag(-(i+1) sin(leaf_i)).
template <class C>
std::vector<Array> expected_blocks(const C& c, bool hessian_of_f) {
  std::vector<Array> leaves = tree::leaves(c), out;
  for (size_t i = 0; i < leaves.size(); ++i)
    for (size_t j = 0; j < leaves.size(); ++j) {
      if (i != j) {
        out.push_back(zeros({2, 2}, f64));
        continue;
      }
      Array d = hessian_of_f ? -graft::sin(leaves[i]) * static_cast<double>(i + 1) : graft::cos(leaves[i]);
      out.push_back(eye(2) * reshape(d, {1, 2}));
    }
  return out;
}

}  // namespace

TEMPLATE_TEST_CASE("pytree matrix: every container through every transform", "[pytree][transforms]", Pair, Tuple,
                   Arr, Vec, Map, Params, Nested) {
  using C = TestType;
  const C c = sample<C>();
  const C t = sample<C>(0, 0.7);  // a tangent / cotangent of c's structure

  SECTION("grad and value_and_grad keep the argument's structure") {
    C g = grad(f<C>)(c);
    check_leaves(tree::leaves(g), expected_grad(c));
    auto [value, g2] = value_and_grad(f<C>)(c);
    CHECK(item(value) == Approx(item(f(c))));
    check_leaves(tree::leaves(g2), expected_grad(c));
    // As the second argument, alone and beside another.
    auto f2 = [](const Array& s, const C& x) { return f(x) * s; };
    C g1 = grad<1>(f2)(scalar(2.0, f64), c);
    std::vector<Array> want = expected_grad(c);
    for (Array& w : want) w = w * 2.0;
    check_leaves(tree::leaves(g1), want);
    auto [gs, gc] = grad<0, 1>(f2)(scalar(2.0, f64), c);
    CHECK(item(gs) == Approx(item(f(c))));
    check_leaves(tree::leaves(gc), want);
  }

  SECTION("vjp: the pullback returns one tree per argument") {
    auto [out, pullback] = vjp(h<C>, c);
    check_leaves(tree::leaves(out), mapped(c, sin_of));
    auto cts = pullback(t);
    static_assert(std::tuple_size_v<decltype(cts)> == 1, "one cotangent per argument");
    static_assert(std::is_same_v<std::decay_t<decltype(std::get<0>(cts))>, C>);
    std::vector<Array> want = mapped(c, cos_of), tl = tree::leaves(t);
    for (size_t i = 0; i < want.size(); ++i) want[i] = want[i] * tl[i];
    check_leaves(tree::leaves(std::get<0>(cts)), want);
  }

  SECTION("jvp: primal and tangent outputs of the argument's structure") {
    auto [y, ty] = jvp(h<C>, std::make_tuple(c), std::make_tuple(t));
    static_assert(std::is_same_v<decltype(y), C>);
    check_leaves(tree::leaves(y), mapped(c, sin_of));
    std::vector<Array> want = mapped(c, cos_of), tl = tree::leaves(t);
    for (size_t i = 0; i < want.size(); ++i) want[i] = want[i] * tl[i];
    check_leaves(tree::leaves(ty), want);
  }

  SECTION("vmap maps every leaf and equals the loop") {
    const C batch = sample<C>(3);
    C y = vmap(h<C>)(batch);
    check_leaves(tree::leaves(y), mapped(batch, sin_of));
    C g = vmap(grad(f<C>))(batch);
    std::vector<Array> gl = tree::leaves(g);
    for (int r = 0; r < 3; ++r) {
      C one = tree::map([r](const Array& a) { return a[r]; }, batch);
      std::vector<Array> want = expected_grad(one), got;
      for (const Array& a : gl) got.push_back(a[r]);
      check_leaves(got, want);
    }
  }

  SECTION("jit and checkpoint return the same tree") {
    check_leaves(tree::leaves(jit(h<C>)(c)), mapped(c, sin_of));
    check_leaves(tree::leaves(jit(grad(f<C>))(c)), expected_grad(c));
    check_leaves(tree::leaves(checkpoint(h<C>)(c)), mapped(c, sin_of));
    check_leaves(tree::leaves(grad([](const C& x) { return f(checkpoint(h<C>)(x)); })(c)),
                 [&] {
                   // d/dx_i (i+1) sum(sin(sin x_i)) = (i+1) cos(sin x_i) cos x_i
                   std::vector<Array> l = tree::leaves(c);
                   for (size_t i = 0; i < l.size(); ++i)
                     l[i] = graft::cos(graft::sin(l[i])) * graft::cos(l[i]) * static_cast<double>(i + 1);
                   return l;
                 }());
  }

  SECTION("pmap over the available devices keeps the tree") {
    const C one_row = sample<C>(1);
    C y = pmap(h<C>)(one_row);
    check_leaves(tree::leaves(y), mapped(one_row, sin_of));
  }

  SECTION("jacobians: output structure outside, input structure inside") {
    // Of a scalar: the gradient's structure.
    C jf = jacfwd(f<C>)(c), jr = jacrev(f<C>)(c);
    check_leaves(tree::leaves(jf), expected_grad(c));
    check_leaves(tree::leaves(jr), expected_grad(c));
    // Of an Array-valued function of one Array leaf: the output's structure, blocks out.shape + in.shape.
    Array x = array({0.3, -0.4});
    auto spread = [&](const Array& a) { return tree::map([&](const Array& leaf) { return leaf * graft::sin(a); }, c); };
    C js = jacfwd(spread)(x);
    std::vector<Array> want;
    for (const Array& leaf : tree::leaves(c)) want.push_back(reshape(leaf, {2, 1}) * graft::cos(x) * eye(2));
    check_leaves(tree::leaves(js), want);
    check_leaves(tree::leaves(jacrev(spread)(x)), want);
    if constexpr (!std::is_same_v<C, Params>) {
      // Tree in, tree out (a struct's fields cannot hold trees, so not for Params).
      check_leaves(tree::leaves(jacfwd(h<C>)(c)), expected_blocks(c, false));
      check_leaves(tree::leaves(jacrev(h<C>)(c)), expected_blocks(c, false));
      auto hs = hessian(f<C>)(c);
      check_leaves(tree::leaves(hs), expected_blocks(c, true));
    }
  }
}

TEST_CASE("pytree: a pair argument's gradient keeps both halves", "[pytree][grad]") {
  // The reported case: the second half of the gradient was dropped.
  auto loss = [](const std::pair<Array, Array>& w) { return sum(w.first * w.first) + sum(w.second * 3.0); };
  std::pair<Array, Array> w{array({1.0, 2.0}), array({5.0})};
  std::pair<Array, Array> g = grad(loss)(w);
  CHECK(g.first.to_vector<double>() == std::vector<double>{2.0, 4.0});
  CHECK(g.second.to_vector<double>() == std::vector<double>{3.0});
  // A one-argument vjp's pullback is a one-element tuple even when the argument is itself a tuple.
  auto [out, pullback] = vjp([](const std::tuple<Array, Array>& p) { return std::get<0>(p) * std::get<1>(p); },
                             std::make_tuple(array({2.0}), array({3.0})));
  auto cts = pullback(array({1.0}));
  static_assert(std::tuple_size_v<decltype(cts)> == 1);
  CHECK(std::get<0>(std::get<0>(cts)).item<double>() == 3.0);
  CHECK(std::get<1>(std::get<0>(cts)).item<double>() == 2.0);
}
