// Out-of-range indices are treated the same in an indexing op's forward
// pass, its JVP, its transpose and its batching rule: gather and dynamic
// slices clamp, scatter_add drops. The expected gradients are closed forms
// (JAX's clip mode for gathers, drop mode for scatters) and finite differences.
#include <catch2/catch.hpp>
#include <functional>

#include "graft/graft.h"
#include "graft/testing.h"

using namespace graft;

namespace {

std::vector<double> values(const Array& a) { return a.to_vector<double>(); }

// Central differences of a scalar f along each coordinate of x (f64).
std::vector<double> numeric_grad(const std::function<Array(const Array&)>& f, const Array& x) {
  std::vector<double> base = values(x), g(base.size());
  const double h = 1e-6;
  for (size_t i = 0; i < base.size(); ++i) {
    std::vector<double> p = base, m = base;
    p[i] += h;
    m[i] -= h;
    g[i] = (f(array(p, x.shape())).item<double>() - f(array(m, x.shape())).item<double>()) / (2 * h);
  }
  return g;
}

void check_close(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("entry " << i);
    CHECK(got[i] == Approx(want[i]).margin(1e-6));
  }
}

}  // namespace

TEST_CASE("index bounds: scatter_add drops an out-of-range update in its gradient too", "[transforms][grad]") {
  // The reproduction from the report: JAX's drop mode gives [1, 0].
  Array x = zeros({5}, f64);
  Array idx = array({1, 7});
  Array u = array({10.0, 20.0});
  Array w = arange(5, f64);
  auto loss_u = [&](const Array& uu) { return sum(w * scatter_add(x, idx, uu)); };
  check_close(values(grad(loss_u)(u)), {1, 0});
  check_close(values(grad(loss_u)(u)), numeric_grad(loss_u, u));
  check_close(values(jit(grad(loss_u))(u)), {1, 0});
  // Forward value agrees: the 20 went nowhere.
  CHECK(loss_u(u).item<double>() == Approx(10.0));

  // Negative indices wrap once (NumPy); below -n they are out of range and dropped.
  Array idx2 = array({-1, -9, 5, 0});
  Array u2 = array({1.0, 2.0, 3.0, 4.0});
  auto loss2 = [&](const Array& uu) { return sum(w * scatter_add(x, idx2, uu)); };
  check_close(values(grad(loss2)(u2)), {4, 0, 0, 0});
  check_close(values(grad(loss2)(u2)), numeric_grad(loss2, u2));

  // The gradient w.r.t. the operand is the cotangent itself, whatever the indices.
  auto loss_x = [&](const Array& xx) { return sum(w * scatter_add(xx, idx, u)); };
  check_close(values(grad(loss_x)(x)), {0, 1, 2, 3, 4});

  // Along axis 1 of a matrix, with the update rows reaching past the end.
  Array m = zeros({2, 3}, f64);
  Array wm = array<double>({1, 2, 3, 4, 5, 6}, {2, 3});
  Array um = array<double>({1, 1, 1, 1, 1, 1}, {2, 3});
  Array idx3 = array({2, 3, -4});
  auto loss3 = [&](const Array& uu) { return sum(wm * scatter_add(m, idx3, uu, 1)); };
  check_close(values(grad(loss3)(um)), {3, 0, 0, 6, 0, 0});
  check_close(values(grad(loss3)(um)), numeric_grad(loss3, um));
}

TEST_CASE("index bounds: gather clamps, and its gradient lands where the read came from", "[transforms][grad]") {
  Array x = array({1.0, 2.0, 3.0, 4.0, 5.0});
  Array idx = array({1, 7, -9});  // 7 clamps to 4; -9 wraps to -4 and clamps to 0
  Array w = array({1.0, 10.0, 100.0});
  auto loss = [&](const Array& xx) { return sum(w * take(xx, idx)); };
  CHECK(loss(x).item<double>() == Approx(2 + 50 + 100));
  check_close(values(grad(loss)(x)), {100, 1, 0, 0, 10});
  check_close(values(grad(loss)(x)), numeric_grad(loss, x));
  check_close(values(jit(grad(loss))(x)), {100, 1, 0, 0, 10});
  // Forward mode agrees with reverse mode (the dot-product test).
  Array v = array({0.3, -0.2, 0.5, 0.7, -1.1});
  double fwd = jvp(loss, std::make_tuple(x), std::make_tuple(v)).second.item<double>();
  CHECK(fwd == Approx(sum(grad(loss)(x) * v).item<double>()));
}

TEST_CASE("index bounds: dynamic slices clamp their start in every rule", "[transforms][grad]") {
  Array x = array({1.0, 2.0, 3.0, 4.0, 5.0});
  auto sliced = [](const Array& xx) {
    return sum(dynamic_slice(xx, {scalar(4, i32)}, {2}) * array({1.0, 10.0}));  // start clamps to 3
  };
  check_close(values(grad(sliced)(x)), {0, 0, 0, 1, 10});
  check_close(values(grad(sliced)(x)), numeric_grad(sliced, x));
  auto updated = [](const Array& xx) {
    Array y = dynamic_update_slice(xx, xx[0] * array({2.0, 3.0}), {scalar(-3, i32)});  // start clamps to 0
    return sum(y * arange(5, f64));
  };
  // y = [2 x0, 3 x0, x2, x3, x4]: d/dx0 = 0*2 + 1*3, others their weights.
  check_close(values(grad(updated)(x)), {3, 0, 2, 3, 4});
  check_close(values(grad(updated)(x)), numeric_grad(updated, x));
}

TEST_CASE("index bounds: batched gradients equal the loop over examples", "[transforms][vmap][grad]") {
  Array x = zeros({5}, f64);
  Array w = arange(5, f64);
  Array idx = array<int32_t>({1, 7, 4, -6, 0, 2}, {3, 2});  // one index pair per example
  Array u = array<double>({1, 2, 3, 4, 5, 6}, {3, 2});
  auto per_example = [&](const Array& uu, const Array& ii) { return grad([&](const Array& a) {
                                                               return sum(w * scatter_add(x, ii, a));
                                                             })(uu); };
  Array batched = vmap(per_example)(u, idx);
  for (int b = 0; b < 3; ++b) {
    INFO("example " << b);
    check_close(values(batched[b]), values(per_example(u[b], idx[b])));
  }
  check_close(values(batched), {1, 0, 4, 0, 0, 2});

  Array xs = array<double>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {2, 5});
  Array gi = array<int32_t>({9, 0, -1, 2}, {2, 2});
  auto take_grad = [](const Array& xx, const Array& ii) {
    return grad([&](const Array& a) { return sum(take(a, ii) * array({1.0, 10.0})); })(xx);
  };
  Array tb = vmap(take_grad)(xs, gi);
  for (int b = 0; b < 2; ++b) check_close(values(tb[b]), values(take_grad(xs[b], gi[b])));
  check_close(values(tb), {10, 0, 0, 0, 1, 0, 0, 10, 0, 1});
}

TEST_CASE("index bounds: check_grads through gather and scatter with indices out of range", "[transforms][grad]") {
  Array x = array({0.5, -1.0, 2.0, 0.25});
  Array idx = array({3, 5, -2, -8});
  testing::check_grads([&](const Array& a) { return graft::sin(take(a, idx)) * 2.0; }, std::make_tuple(x), 2);
  testing::check_grads([&](const Array& a) { return graft::exp(scatter_add(a, idx, graft::square(a))); },
                       std::make_tuple(x), 2);
}
