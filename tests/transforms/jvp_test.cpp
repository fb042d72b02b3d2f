// Forward mode: jvp against central finite differences in f64, symbolic
// zeros, composition, and the rule coverage of the op table.
#include <catch2/catch.hpp>
#include <map>
#include <cmath>
#include <functional>

#include "graft/graft.h"
#include "ir/graph.h"
#include "transforms/rules/jvp_rule.h"
#include "transforms/rules/transpose_rule.h"

using namespace graft;

namespace {

using Fn = std::function<Array(const Array&)>;

// Checks jvp(f)(x; v) against (f(x + h v) - f(x - h v)) / 2h elementwise.
void check_jvp(const Fn& f, const Array& x, const Array& v, double tol = 1e-6) {
  auto [y, t] = jvp([&](const Array& a) { return f(a); }, std::make_tuple(x), std::make_tuple(v));
  const double h = 1e-6;
  std::vector<double> hi = f(x + v * h).to_vector<double>(), lo = f(x - v * h).to_vector<double>();
  std::vector<double> got = t.to_vector<double>();
  std::vector<double> val = y.to_vector<double>(), want_val = f(x).to_vector<double>();
  REQUIRE(got.size() == hi.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    CHECK(val[i] == Approx(want_val[i]));
    CHECK(got[i] == Approx((hi[i] - lo[i]) / (2 * h)).margin(tol).epsilon(tol));
  }
}

Array points(std::vector<double> v) { return array(v, {static_cast<int64_t>(v.size())}); }

}  // namespace

TEST_CASE("jvp: unary elementwise ops match finite differences", "[transforms][jvp]") {
  Array x = points({-0.7, -0.2, 0.3, 0.9});     // inside (-1, 1) for asin/acos
  Array xp = points({0.4, 1.1, 2.5, 3.7});      // positive for log/sqrt/rsqrt/reciprocal
  Array v = points({0.3, -1.2, 0.8, 2.0});
  std::vector<std::pair<const char*, Fn>> anywhere = {
      {"neg", [](const Array& a) { return -a; }},
      {"abs", [](const Array& a) { return graft::abs(a); }},
      {"exp", [](const Array& a) { return graft::exp(a); }},
      {"expm1", [](const Array& a) { return graft::expm1(a); }},
      {"log1p", [](const Array& a) { return graft::log1p(a); }},
      {"sin", [](const Array& a) { return graft::sin(a); }},
      {"cos", [](const Array& a) { return graft::cos(a); }},
      {"tan", [](const Array& a) { return graft::tan(a); }},
      {"asin", [](const Array& a) { return graft::asin(a); }},
      {"acos", [](const Array& a) { return graft::acos(a); }},
      {"atan", [](const Array& a) { return graft::atan(a); }},
      {"sinh", [](const Array& a) { return graft::sinh(a); }},
      {"cosh", [](const Array& a) { return graft::cosh(a); }},
      {"tanh", [](const Array& a) { return graft::tanh(a); }},
      {"logistic", [](const Array& a) { return graft::logistic(a); }},
      {"erf", [](const Array& a) { return graft::erf(a); }},
      {"square", [](const Array& a) { return graft::square(a); }},
  };
  for (auto& [name, f] : anywhere) {
    INFO(name);
    check_jvp(f, x, v);
  }
  std::vector<std::pair<const char*, Fn>> positive = {
      {"log", [](const Array& a) { return graft::log(a); }},
      {"sqrt", [](const Array& a) { return graft::sqrt(a); }},
      {"rsqrt", [](const Array& a) { return graft::rsqrt(a); }},
      {"reciprocal", [](const Array& a) { return graft::reciprocal(a); }},
  };
  for (auto& [name, f] : positive) {
    INFO(name);
    check_jvp(f, xp, v);
  }
  // Piecewise-constant ops have zero tangents.
  auto [y, t] = jvp([](const Array& a) { return graft::floor(a) + graft::sign(a); }, std::make_tuple(x), std::make_tuple(v));
  CHECK(t.to_vector<double>() == std::vector<double>(4, 0.0));
}

TEST_CASE("jvp: binary ops, select and conversion", "[transforms][jvp]") {
  Array a = points({0.5, 1.5, 2.0, 3.0}), b = points({1.2, -0.7, 2.0, 0.4});
  Array va = points({1.0, -0.5, 0.25, 2.0}), vb = points({-0.3, 0.7, 1.1, 0.2});
  auto both = [&](std::function<Array(const Array&, const Array&)> f) {
    // Differentiate along (va, vb) jointly through a packed argument.
    return [f](const Array& ab) { return f(ab[0], ab[1]); };
  };
  Array ab = stack({a, b}), vab = stack({va, vb});
  check_jvp(both([](const Array& x, const Array& y) { return x + y; }), ab, vab);
  check_jvp(both([](const Array& x, const Array& y) { return x - y; }), ab, vab);
  check_jvp(both([](const Array& x, const Array& y) { return x * y; }), ab, vab);
  check_jvp(both([](const Array& x, const Array& y) { return x / y; }), ab, vab);
  check_jvp(both([](const Array& x, const Array& y) { return graft::pow(x, y); }), ab, vab);
  check_jvp(both([](const Array& x, const Array& y) { return graft::atan2(x, y); }), ab, vab);
  // max/min away from ties (a tie at index 2 is checked separately)
  Array c = points({0.5, 1.5, 2.5, 3.0});
  check_jvp(both([](const Array& x, const Array& y) { return graft::maximum(x, y); }), stack({c, b}), vab);
  check_jvp(both([](const Array& x, const Array& y) { return graft::minimum(x, y); }), stack({c, b}), vab);
  auto [m, tm] = jvp([](const Array& x, const Array& y) { return graft::maximum(x, y); }, std::make_tuple(a, b),
                     std::make_tuple(va, vb));
  CHECK(tm.to_vector<double>()[2] == Approx((0.25 + 1.1) / 2));  // tie: the mean of both tangents
  check_jvp([](const Array& x) { return where(x > 1.0, graft::square(x), -x); }, a, va);
  auto [cv, tcv] = jvp([](const Array& x) { return astype(astype(x, f32), f64); }, std::make_tuple(a), std::make_tuple(va));
  CHECK(tcv.to_vector<double>()[3] == Approx(2.0));
  auto [ci, tci] = jvp([](const Array& x) { return astype(astype(x, i32), f64); }, std::make_tuple(a), std::make_tuple(va));
  CHECK(tci.to_vector<double>() == std::vector<double>(4, 0.0));  // through an integer: no derivative
}

TEST_CASE("jvp: reductions, layout, indexing and dot_general", "[transforms][jvp]") {
  std::vector<double> d(12);
  for (int k = 0; k < 12; ++k) d[k] = std::sin(1.3 * k) + 0.1 * k;
  Array x = array(d, {3, 4});
  Array v = graft::cos(x * 0.7);
  check_jvp([](const Array& a) { return sum(a, {1}); }, x, v);
  check_jvp([](const Array& a) { return max(a, {0}); }, x, v);
  check_jvp([](const Array& a) { return min(a); }, x, v);
  check_jvp([](const Array& a) { return cumsum(a, 1); }, x, v);
  check_jvp([](const Array& a) { return cumprod(a, 1); }, x, v);
  check_jvp([](const Array& a) { return cumprod(a, 0, true); }, x, v);
  check_jvp([](const Array& a) { return cummax(a, 1); }, x, v);
  check_jvp([](const Array& a) { return cummin(a, 0, true); }, x, v);
  // Exact at zeros, where a division-based rule would produce NaN.
  check_jvp([](const Array& a) { return cumprod(a, 1); }, array<double>({2, 0, 3, -1, 0, 0}, {2, 3}), array<double>({1, 2, 3, 4, 5, 6}, {2, 3}));
  check_jvp([](const Array& a) { return logsumexp(a, {1}); }, x, v);
  check_jvp([](const Array& a) { return softmax(a); }, x, v);
  check_jvp([](const Array& a) { return mean(a * a); }, x, v);
  check_jvp([](const Array& a) { return transpose(a) + 1.0; }, x, v);
  check_jvp([](const Array& a) { return reshape(a, {2, 6}) * 2.0; }, x, v);
  check_jvp([](const Array& a) { return broadcast_to(sum(a, {0}), {2, 4}); }, x, v);
  check_jvp([](const Array& a) { return flip(a, {1}); }, x, v);
  check_jvp([](const Array& a) { return slice(a, {1, 0}, {3, 4}, {1, 2}); }, x, v);
  check_jvp([](const Array& a) { return concatenate({a, graft::sin(a)}, 1); }, x, v);
  check_jvp([](const Array& a) { return pad(a, {{1, 0}, {0, 2}}, 3.0); }, x, v);
  check_jvp([](const Array& a) { return take(a, array({2, 0, 2}), 0); }, x, v);
  check_jvp([](const Array& a) { return scatter_add(a, array({1, 1}), graft::square(a[0]), 0); }, x, v);
  check_jvp([](const Array& a) { return dynamic_slice(a, {scalar(1, i32), scalar(2, i32)}, {2, 2}); }, x, v);
  check_jvp([](const Array& a) { return dynamic_update_slice(a, reshape(graft::exp(a[0]), {1, 4}), {scalar(2, i32), scalar(0, i32)}); },
            x, reshape(v, {3, 4}));
  check_jvp([](const Array& a) { return matmul(a, transpose(a)); }, x, v);
  check_jvp([](const Array& a) { return einsum("ij,kj->ik", {a, graft::tanh(a)}); }, x, v);
}

TEST_CASE("jvp: an MLP loss, pytrees, second order and closures", "[transforms][jvp]") {
  std::vector<Array> params = {array<double>({0.1, -0.2, 0.3, 0.4, -0.5, 0.6}, {2, 3}), array<double>({0.05, -0.05, 0.1}, {3})};
  Array xs = array<double>({1.0, 2.0, -1.0, 0.5}, {2, 2});
  auto loss = [&](const std::vector<Array>& p) { return mean(graft::square(graft::tanh(matmul(xs, p[0]) + p[1]))); };
  std::vector<Array> dir = {full({2, 3}, 0.5, f64), array<double>({1.0, 0.0, -1.0}, {3})};
  auto [l, tl] = jvp(loss, std::make_tuple(params), std::make_tuple(dir));
  const double h = 1e-6;
  std::vector<Array> up = {params[0] + dir[0] * h, params[1] + dir[1] * h};
  std::vector<Array> down = {params[0] - dir[0] * h, params[1] - dir[1] * h};
  CHECK(tl.item<double>() == Approx((loss(up).item<double>() - loss(down).item<double>()) / (2 * h)).epsilon(1e-6));

  // Second order: the jvp of (x -> jvp of sin at x along 1) is -sin.
  auto dsin = [](const Array& a) {
    return jvp([](const Array& b) { return graft::sin(b); }, std::make_tuple(a),
               std::make_tuple(full(a.shape(), 1.0, f64)))
        .second;
  };
  Array x = points({0.3, 1.0, 2.0});
  auto [d1, d2] = jvp(dsin, std::make_tuple(x), std::make_tuple(full({3}, 1.0, f64)));
  for (int i = 0; i < 3; ++i) {
    CHECK(d1.to_vector<double>()[i] == Approx(std::cos(x.to_vector<double>()[i])));
    CHECK(d2.to_vector<double>()[i] == Approx(-std::sin(x.to_vector<double>()[i])));
  }

  // A closure over an outer traced value: inside make_graph, jvp w.r.t. x of x * y.
  Graph g = make_graph([](const Array& x0, const Array& y0) {
    return jvp([&](const Array& a) { return a * y0; }, std::make_tuple(x0), std::make_tuple(full({3}, 1.0, f64))).second;
  })(points({1, 2, 3}), points({4, 5, 6}));
  CHECK(evaluate(g, {points({1, 2, 3}), points({4, 5, 6})})[0].to_vector<double>() == std::vector<double>{4, 5, 6});
}

TEST_CASE("jvp: zero tangents stay symbolic", "[transforms][jvp]") {
  // d/dx of x * y with y closed over: the graph multiplies the tangent by y once
  // and holds no arithmetic on zeros.
  Array y = points({4, 5, 6});
  Graph g = make_graph([&](const Array& x, const Array& t) {
    return jvp([&](const Array& a) { return a * y + y; }, std::make_tuple(x), std::make_tuple(t)).second;
  })(points({1, 2, 3}), points({1, 1, 1}));
  int muls = 0, adds = 0, constants = 0;
  for (const auto& n : g.ir().nodes()) {
    muls += n.op == ir::Op::mul;
    adds += n.op == ir::Op::add;
    constants += n.op == ir::Op::constant;
  }
  // The tangent t * y alone (the primal x * y + y is not returned, so
  // make_graph drops it): y's zero tangent adds no zeros constant, no
  // multiplication by it and no addition of it.
  CHECK(muls == 1);
  CHECK(adds == 0);
  CHECK(constants == 1);  // y itself
}

TEST_CASE("jvp: bad input", "[transforms][jvp][errors]") {
  Array x = points({1, 2});
  CHECK_THROWS_AS(jvp([](const Array& a) { return a; }, std::make_tuple(array({1, 2})), std::make_tuple(array({1, 2}))),
                  DTypeError);
  CHECK_THROWS_AS(jvp([](const Array& a) { return a; }, std::make_tuple(x), std::make_tuple(points({1, 2, 3}))),
                  ShapeError);
  CHECK_THROWS_AS(jvp([](const Array& a) { return cumsum(a, 0) * 0.0 + a; }, std::make_tuple(array({1, 2})),
                      std::make_tuple(array({1, 2}))),
                  DTypeError);
}

TEST_CASE("linearize: the forward pass runs once, each tangent only the linear part", "[transforms][jvp]") {
  auto f = [](const Array& x, const Array& y) { return std::make_pair(graft::sin(x) * y, sum(graft::exp(x * y))); };
  Array x = points({0.3, -0.7, 1.1}), y = points({2.0, 0.5, -1.0});
  auto [value, f_jvp] = linearize(f, x, y);
  CHECK(value.first.to_vector<double>()[0] == Approx(std::sin(0.3) * 2.0));
  for (double s : {1.0, -0.5, 3.0}) {
    Array u = points({0.1, 0.2, 0.3}) * s, v = points({-1.0, 0.4, 0.0}) * s;
    auto [tx, ty] = f_jvp(u, v);
    auto [want_value, want] = jvp(f, std::make_tuple(x, y), std::make_tuple(u, v));
    std::vector<double> a = tx.to_vector<double>(), b = want.first.to_vector<double>();
    for (size_t i = 0; i < a.size(); ++i) CHECK(a[i] == Approx(b[i]).epsilon(1e-12));
    CHECK(ty.item<double>() == Approx(want.second.item<double>()).epsilon(1e-12));
  }
  // The linear part holds no sin, cos or exp: they ran in the forward pass.
  Graph g = make_graph([&](const Array& u, const Array& v) { return f_jvp(u, v).first; })(x, y);
  for (const char* op : {"sin", "cos", "exp"}) CHECK(g.to_text().find(std::string(" ") + op + " ") == std::string::npos);
  CHECK_THROWS_AS(f_jvp(points({1, 2}), y), ShapeError);
  CHECK_THROWS_AS(linearize(f, array({1, 2, 3}), y), DTypeError);
}
