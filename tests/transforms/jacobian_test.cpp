// vjp, jacfwd, jacrev and hessian against closed forms.
#include <catch2/catch.hpp>
#include <cmath>

#include "graft/graft.h"

using namespace graft;

namespace {
Array points(std::vector<double> v) { return array(v, {static_cast<int64_t>(v.size())}); }
}  // namespace

TEST_CASE("vjp: pytree outputs, several arguments, integer arguments", "[transforms][vjp]") {
  Array x = points({0.5, 1.0}), y = points({2.0, -3.0});
  auto f = [](const Array& a, const Array& b) { return std::make_pair(a * b, graft::sin(a)); };
  auto [out, pullback] = vjp(f, x, y);
  CHECK(out.first.to_vector<double>() == std::vector<double>{1.0, -3.0});
  auto [gx, gy] = pullback(std::make_pair(points({1.0, 2.0}), points({10.0, 0.0})));
  CHECK(gx.to_vector<double>()[0] == Approx(2.0 * 1.0 + std::cos(0.5) * 10.0));
  CHECK(gx.to_vector<double>()[1] == Approx(-3.0 * 2.0));
  CHECK(gy.to_vector<double>() == std::vector<double>{0.5, 2.0});
  // The pullback can be called again with another cotangent.
  auto [gx2, gy2] = pullback(std::make_pair(points({0.0, 0.0}), points({1.0, 1.0})));
  CHECK(gx2.to_vector<double>()[1] == Approx(std::cos(1.0)));
  CHECK(gy2.to_vector<double>() == std::vector<double>{0.0, 0.0});

  auto g = [](const Array& a, const Array& n) { return a * astype(n, f64); };
  auto [o, pb] = vjp(g, x, array({3, 4}));
  auto [ga, gn] = pb(points({1.0, 1.0}));
  CHECK(ga.to_vector<double>() == std::vector<double>{3, 4});
  CHECK(gn.dtype() == i32);
  CHECK(gn.to_vector<int32_t>() == std::vector<int32_t>{0, 0});
  CHECK_THROWS_AS(pb(points({1.0, 1.0, 1.0})), ShapeError);
}

TEST_CASE("jacfwd and jacrev agree with the analytic Jacobian", "[transforms][jacobian]") {
  auto f = [](const Array& x) { return stack({x[0] * x[1], graft::sin(x[0]), graft::square(x[1])}); };
  Array x = points({0.7, -1.3});
  std::vector<double> want = {-1.3, 0.7, std::cos(0.7), 0.0, 0.0, 2 * -1.3};
  Array jf = jacfwd(f)(x), jr = jacrev(f)(x);
  CHECK(jf.shape() == Shape{3, 2});
  CHECK(jr.shape() == Shape{3, 2});
  for (int i = 0; i < 6; ++i) {
    CHECK(jf.to_vector<double>()[i] == Approx(want[i]));
    CHECK(jr.to_vector<double>()[i] == Approx(want[i]));
  }
  // Matrix in, matrix out: shape out.shape + in.shape.
  Array m = array<double>({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(jacrev([](const Array& a) { return transpose(a) * 2.0; })(m).shape() == Shape{3, 2, 2, 3});
  Array jm = jacfwd([](const Array& a) { return transpose(a) * 2.0; })(m);
  CHECK(jm.to_vector<double>()[0] == 2.0);  // d out[0,0] / d in[0,0]
  CHECK(sum(jm).item<double>() == 12.0);    // six entries of 2
}

TEST_CASE("hessian: closed forms", "[transforms][jacobian]") {
  Array x = points({0.5, -1.0, 2.0});
  Array h = hessian([](const Array& a) { return sum(a * a * a); })(x);
  CHECK(h.shape() == Shape{3, 3});
  std::vector<double> hv = h.to_vector<double>();
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) CHECK(hv[i * 3 + j] == Approx(i == j ? 6 * x.to_vector<double>()[i] : 0.0));
  // Rosenbrock's Hessian at (x, y).
  auto rosen = [](const Array& p) { return graft::square(1.0 - p[0]) + 100.0 * graft::square(p[1] - graft::square(p[0])); };
  double a = -1.2, b = 1.0;
  std::vector<double> hr = hessian(rosen)(points({a, b})).to_vector<double>();
  CHECK(hr[0] == Approx(2 - 400 * (b - a * a) + 800 * a * a));
  CHECK(hr[1] == Approx(-400 * a));
  CHECK(hr[2] == Approx(-400 * a));
  CHECK(hr[3] == Approx(200.0));
}

TEST_CASE("jacfwd and jacrev are one batched pass, not one per basis vector", "[transforms][jacobian][vmap]") {
  auto f = [](const Array& x) { return graft::sin(x) * sum(x * x); };
  auto nodes = [&](auto jac, int64_t n) {
    return make_graph(jac)(astype(arange(n), f64)).num_nodes();
  };
  CHECK(nodes(jacfwd(f), 3) == nodes(jacfwd(f), 12));
  CHECK(nodes(jacrev(f), 3) == nodes(jacrev(f), 12));
  CHECK(nodes(hessian([](const Array& x) { return sum(graft::sin(x) * x); }), 2) ==
        nodes(hessian([](const Array& x) { return sum(graft::sin(x) * x); }), 7));
  Array x = astype(arange(4), f64) * 0.3;
  Array jf = jacfwd(f)(x), jr = jacrev(f)(x);
  std::vector<double> a = jf.to_vector<double>(), b = jr.to_vector<double>();
  for (size_t i = 0; i < a.size(); ++i) CHECK(a[i] == Approx(b[i]).epsilon(1e-12));
  // d/dx_j [sin(x_i) s] = cos(x_i) s [i == j] + sin(x_i) 2 x_j, with s = sum x^2.
  double s = 0;
  for (int j = 0; j < 4; ++j) s += 0.09 * j * j;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      CHECK(a[i * 4 + j] == Approx((i == j ? std::cos(0.3 * i) * s : 0.0) + std::sin(0.3 * i) * 2 * 0.3 * j));
}
