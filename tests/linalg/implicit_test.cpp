// graft::linalg's custom_linear_solve, custom_root and expm.
// custom_linear_solve: the solution and its derivatives (forward and
// reverse, in A's parameters and in b) equal those of the direct solve,
// also when the solver is a while_loop that has no reverse mode (conjugate
// gradients), by way of transpose_solve; symmetric; the error without a
// transpose; vmap equals a loop. custom_root: Newton's square root and a
// vector root, against the implicit function theorem's answer and finite
// differences. expm: against a long-double Taylor reference at every Padé
// degree and with squarings, JAX's gradients, f32, NaNs past 16 squarings.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "graft/graft.h"
#include "graft/testing.h"
#include "linalg/linalg_helpers.h"

using namespace graft;
using graft::test::max_abs_diff;
using graft::test::mT;

namespace {

// A(theta) = S + diag(theta^2), symmetric positive definite for any theta.
Array spd_matrix(const Array& theta) {
  const Array s = array(
      std::vector<double>{4.0, 1.0, 0.5, 0.0, 1.0, 3.0, 0.2, 0.1, 0.5, 0.2, 2.0, 0.3, 0.0, 0.1, 0.3, 1.5}, {4, 4});
  return s + eye(4) * (theta * theta);
}

// A(theta) that is not symmetric: its transpose solve matters.
Array general_matrix(const Array& theta) {
  const Array s = array(
      std::vector<double>{4.0, 1.0, 0.5, 0.0, -1.0, 3.0, 0.2, 0.1, 0.7, -0.2, 2.0, 0.3, 0.4, 0.1, -0.3, 1.5}, {4, 4});
  return s + eye(4) * theta + reshape(theta, {4, 1}) * 0.1;
}

// Conjugate gradients on matvec alone, in a while_loop (no reverse mode):
// stops when |r|^2 < 1e-28 or after 50 steps.
Array conjugate_gradients(const linalg::ArrayFunction& matvec, const Array& b) {
  using Carry = std::tuple<Array, Array, Array, Array, Array>;  // x, r, p, |r|^2, step
  Carry init{zeros_like(b), b, b, sum(b * b), zeros({}, DType::i32)};
  auto more = [](const Carry& c) { return (std::get<3>(c) > 1e-28) & (std::get<4>(c) < 50); };
  auto step = [&matvec](const Carry& c) {
    const auto& [x, r, p, rr, k] = c;
    const Array ap = matvec(p);
    const Array alpha = rr / sum(p * ap);
    const Array r2 = r - alpha * ap, rr2 = sum(r2 * r2);
    return Carry{x + alpha * p, r2, r2 + (rr2 / rr) * p, rr2, k + 1};
  };
  return std::get<0>(while_loop(more, step, init));
}

// The right-hand side b (no Array at namespace scope: it would touch a device before main).
Array b_vector() { return array(std::vector<double>{1.0, -2.0, 0.5, 3.0}, {4}); }

}  // namespace

TEST_CASE("custom_linear_solve: values and derivatives equal the direct solve's", "[linalg][implicit]") {
  const Array theta = array(std::vector<double>{0.5, -1.0, 0.3, 0.8}, {4});
  auto implicit = [](const Array& t, const Array& b) {
    auto matvec = [&t](const Array& x) { return matmul(general_matrix(t), x); };
    auto solve = [&t](const linalg::ArrayFunction&, const Array& r) { return linalg::solve(general_matrix(t), r); };
    auto solve_t = [&t](const linalg::ArrayFunction&, const Array& r) {
      return linalg::solve(mT(general_matrix(t)), r);
    };
    return linalg::custom_linear_solve(matvec, b, solve, solve_t);
  };
  auto direct = [](const Array& t, const Array& b) { return linalg::solve(general_matrix(t), b); };
  CHECK(max_abs_diff(implicit(theta, b_vector()), direct(theta, b_vector())) < 1e-14);
  const Array w = array(std::vector<double>{0.3, -1.0, 2.0, 0.7}, {4});
  auto loss = [&w](auto f) { return [f, w](const Array& t, const Array& b) { return sum(f(t, b) * w); }; };
  const auto [gt_i, gb_i] = grad<0, 1>(loss(implicit))(theta, b_vector());
  const auto [gt_d, gb_d] = grad<0, 1>(loss(direct))(theta, b_vector());
  CHECK(max_abs_diff(gt_i, gt_d) < 1e-13);
  CHECK(max_abs_diff(gb_i, gb_d) < 1e-13);
  const Array dt = array(std::vector<double>{1.0, 0.5, -0.2, 0.1}, {4}),
              db = array(std::vector<double>{0.0, 1.0, 0.0, -1.0}, {4});
  const Array ji = jvp(implicit, std::make_tuple(theta, b_vector()), std::make_tuple(dt, db)).second;
  const Array jd = jvp(direct, std::make_tuple(theta, b_vector()), std::make_tuple(dt, db)).second;
  CHECK(max_abs_diff(ji, jd) < 1e-13);
  // Under jit, and vmapped over b: a loop of single solves.
  CHECK(max_abs_diff(jit(implicit)(theta, b_vector()), direct(theta, b_vector())) < 1e-14);
  const Array bs = stack({b_vector(), b_vector() * 2.0, b_vector() - 1.0});
  const Array batched = vmap([&](const Array& b) { return implicit(theta, b); })(bs);
  for (int64_t i = 0; i < 3; ++i) CHECK(max_abs_diff(batched[i], direct(theta, bs[i])) < 1e-13);
}

TEST_CASE("custom_linear_solve: an iterative solver in a while_loop differentiates in reverse mode",
          "[linalg][implicit]") {
  const Array theta = array(std::vector<double>{0.5, -1.0, 0.3, 0.8}, {4});
  auto implicit = [](const Array& t) {
    auto matvec = [&t](const Array& x) { return matmul(spd_matrix(t), x); };
    return linalg::custom_linear_solve(matvec, b_vector(), conjugate_gradients, {}, /*symmetric=*/true);
  };
  auto direct = [](const Array& t) { return linalg::solve(spd_matrix(t), b_vector()); };
  CHECK(max_abs_diff(implicit(theta), direct(theta)) < 1e-12);
  auto loss = [](auto f) { return [f](const Array& t) { return sum(f(t) * f(t)); }; };
  CHECK(max_abs_diff(grad(loss(implicit))(theta), grad(loss(direct))(theta)) < 1e-11);
  // Differentiating conjugate gradients' while_loop itself (reverse mode
  // through the loop's steps, which JAX refuses) also works, at the cost of
  // replaying the iterations; the implicit rule is what avoids that.
  auto unrolled = [](const Array& t) {
    return conjugate_gradients([&t](const Array& x) { return matmul(spd_matrix(t), x); }, b_vector());
  };
  UNSCOPED_INFO("through the iterations: " << max_abs_diff(grad(loss(unrolled))(theta), grad(loss(direct))(theta)));
  CHECK(max_abs_diff(grad(loss(unrolled))(theta), grad(loss(direct))(theta)) < 1e-12);
  // A solve with neither transpose_solve nor symmetric: forward mode works,
  // reverse mode says what is missing.
  auto no_transpose = [](const Array& t) {
    auto matvec = [&t](const Array& x) { return matmul(spd_matrix(t), x); };
    return linalg::custom_linear_solve(matvec, b_vector(), conjugate_gradients);
  };
  const Array dt = array(std::vector<double>{1.0, 0.0, 0.0, 0.0}, {4});
  CHECK(max_abs_diff(jvp(no_transpose, std::make_tuple(theta), std::make_tuple(dt)).second,
                     jvp(direct, std::make_tuple(theta), std::make_tuple(dt)).second) < 1e-11);
  CHECK_THROWS_WITH(grad(loss(no_transpose))(theta), Catch::Contains("transpose_solve"));
  // A second derivative differentiates the solvers' own steps (JAX re-binds
  // its primitive there): reverse mode through conjugate gradients' while_loop.
  auto second = [&](auto f) { return grad([&, f](const Array& t) { return sum(grad(loss(f))(t)); })(theta); };
  UNSCOPED_INFO("second derivative: " << max_abs_diff(second(implicit), second(direct)));
  CHECK(max_abs_diff(second(implicit), second(direct)) < 1e-12);
}

TEST_CASE("custom_linear_solve: bad solvers are named errors", "[linalg][implicit]") {
  auto matvec = [](const Array& x) { return x * 2.0; };
  auto wrong = [](const linalg::ArrayFunction&, const Array& b) { return concatenate({b, b}); };
  CHECK_THROWS_WITH(linalg::custom_linear_solve(matvec, b_vector(), wrong), Catch::Contains("solve returned f64[8]"));
  CHECK_THROWS_AS(linalg::custom_linear_solve(matvec, array(std::vector<int32_t>{1, 2}, {2}), conjugate_gradients),
                  DTypeError);
}

TEST_CASE("custom_root: Newton's square root and a vector root differentiate implicitly", "[linalg][implicit]") {
  // x^2 = a by Newton's method in a while_loop; dx/da = 1 / (2 sqrt(a)).
  auto newton = [](const linalg::ArrayFunction& f, const Array& x0) {
    using Carry = std::pair<Array, Array>;
    auto more = [](const Carry& c) { return c.second < 30; };
    auto step = [&f](const Carry& c) {
      const Array fx = f(c.first);
      const Array slope = jvp(f, std::make_tuple(c.first), std::make_tuple(ones_like(c.first))).second;
      return Carry{c.first - fx / slope, c.second + 1};
    };
    return while_loop(more, step, Carry{x0, zeros({}, DType::i32)}).first;
  };
  auto scalar_tangent = [](const linalg::ArrayFunction& g, const Array& y) { return y / g(ones_like(y)); };
  auto root_sqrt = [&](const Array& a) {
    return linalg::custom_root([&a](const Array& x) { return x * x - a; }, ones_like(a), newton, scalar_tangent);
  };
  const Array a = scalar(2.0, DType::f64);
  CHECK(root_sqrt(a).item<double>() == Approx(std::sqrt(2.0)).epsilon(1e-15));
  CHECK(grad(root_sqrt)(a).item<double>() == Approx(0.5 / std::sqrt(2.0)).epsilon(1e-14));
  const Array d2 = grad(grad(root_sqrt))(a);  // -1/4 a^(-3/2): the rule is differentiable again
  CHECK(d2.item<double>() == Approx(-0.25 * std::pow(2.0, -1.5)).epsilon(1e-12));
  const Array as = array(std::vector<double>{0.5, 2.0, 9.0}, {3});
  const Array roots = vmap(root_sqrt)(as);
  for (int64_t i = 0; i < 3; ++i) CHECK(roots[i].item<double>() == Approx(std::sqrt(as[i].item<double>())));

  // A x + 0.1 sin(x) = theta, a vector root; dx/dtheta = (A + 0.1 diag(cos x))^-1.
  const Array m = array(std::vector<double>{3.0, 0.5, 0.2, 0.1, 2.0, -0.3, 0.4, 0.0, 4.0}, {3, 3});
  auto f_of = [&m](const Array& theta) {
    return [&m, theta](const Array& x) { return matmul(m, x) + 0.1 * sin(x) - theta; };
  };
  auto vector_newton = [](const linalg::ArrayFunction& f, const Array& x0) {
    Array x = x0;
    for (int i = 0; i < 30; ++i) x = x - linalg::solve(jacfwd(f)(x), f(x));
    return x;
  };
  auto vector_tangent = [](const linalg::ArrayFunction& g, const Array& y) { return linalg::solve(jacfwd(g)(y), y); };
  auto root = [&](const Array& theta) {
    return linalg::custom_root(f_of(theta), zeros_like(theta), vector_newton, vector_tangent);
  };
  const Array theta = array(std::vector<double>{1.0, -0.5, 2.0}, {3});
  const Array x = root(theta);
  CHECK(max_abs_diff(f_of(theta)(x), zeros({3}, DType::f64)) < 1e-14);
  const Array jac = jacrev(root)(theta);
  const Array expected = linalg::inv(m + 0.1 * eye(3, DType::f64) * cos(x));
  CHECK(max_abs_diff(jac, expected) < 1e-13);
  CHECK(max_abs_diff(jacfwd(root)(theta), expected) < 1e-13);
}

namespace {

// e^a in long double: Taylor's series of a / 2^s (|a / 2^s|_1 <= 1/8, 40
// terms), squared s times; an independent reference for the Padé method.
std::vector<double> expm_reference(const std::vector<double>& a, int n) {
  double norm = 0;
  for (int j = 0; j < n; ++j) {
    double col = 0;
    for (int i = 0; i < n; ++i) col += std::fabs(a[static_cast<size_t>(i * n + j)]);
    norm = std::max(norm, col);
  }
  int s = 0;
  while (norm / std::ldexp(1.0, s) > 0.125) ++s;
  using M = std::vector<long double>;
  auto mul = [n](const M& x, const M& y) {
    M z(static_cast<size_t>(n * n), 0.0L);
    for (int i = 0; i < n; ++i)
      for (int k = 0; k < n; ++k)
        for (int j = 0; j < n; ++j)
          z[static_cast<size_t>(i * n + j)] += x[static_cast<size_t>(i * n + k)] * y[static_cast<size_t>(k * n + j)];
    return z;
  };
  M x(a.begin(), a.end()), term(static_cast<size_t>(n * n), 0.0L), sum_(static_cast<size_t>(n * n), 0.0L);
  for (long double& v : x) v = std::ldexp(v, -s);
  for (int i = 0; i < n; ++i) term[static_cast<size_t>(i * n + i)] = sum_[static_cast<size_t>(i * n + i)] = 1.0L;
  for (int k = 1; k <= 40; ++k) {
    term = mul(term, x);
    for (long double& v : term) v /= k;
    for (size_t i = 0; i < sum_.size(); ++i) sum_[i] += term[i];
  }
  for (int i = 0; i < s; ++i) sum_ = mul(sum_, sum_);
  return std::vector<double>(sum_.begin(), sum_.end());
}

const std::vector<double> kBase{0.3, -0.2, 0.5, 0.1, 0.4, -0.3, -0.6, 0.2, 0.1};  // 1-norm 1

}  // namespace

TEST_CASE("expm: every Padé degree and squaring against a long-double Taylor series", "[linalg][expm]") {
  // 1-norms reaching each degree of JAX's f64 choice (3, 5, 7, 9, 13) and squarings.
  for (double scale : {0.01, 0.2, 0.9, 2.0, 5.0, 60.0}) {
    INFO("1-norm " << scale);
    std::vector<double> a = kBase;
    for (double& v : a) v *= scale;
    const Array got = linalg::expm(array(a, {3, 3}));
    const Array want = array(expm_reference(a, 3), {3, 3});
    const double size = max(abs(want)).item<double>();
    CHECK(max_abs_diff(got, want) <= 1e-13 * size);
    CHECK(max_abs_diff(jit([](const Array& x) { return linalg::expm(x); })(array(a, {3, 3})), got) <= 1e-15 * size);
  }
  // f32, degrees 3, 5, 7 and squarings.
  for (double scale : {0.2, 1.0, 3.0, 20.0}) {
    std::vector<double> a = kBase;
    for (double& v : a) v *= scale;
    const Array got = linalg::expm(astype(array(a, {3, 3}), DType::f32));
    CHECK(got.dtype() == DType::f32);
    const Array want = array(expm_reference(a, 3), {3, 3});
    CHECK(max_abs_diff(got, want) <= 2e-6 * max(abs(want)).item<double>());
  }
  // Batches, and the NaNs JAX gives past 16 squarings (1-norm > 5.37 * 2^17).
  std::vector<double> big = kBase;
  for (double& v : big) v *= 1e6;
  const Array batch = stack({array(kBase, {3, 3}), array(big, {3, 3})});
  const Array both = linalg::expm(batch);
  CHECK(max_abs_diff(both[0], linalg::expm(array(kBase, {3, 3}))) == 0);
  CHECK(all(isnan(both[1])).item<bool>());
  CHECK_THROWS_AS(linalg::expm(zeros({2, 3})), ShapeError);
}

TEST_CASE("expm: gradients equal JAX's through the same steps", "[linalg][expm]") {
  const Array w = array(std::vector<double>{1.0, -2.0, 0.5, 0.3, 0.7, -1.1, 2.0, 0.1, 0.4}, {3, 3});
  auto loss = [&w](const Array& a) { return sum(linalg::expm(a) * w); };
  std::vector<double> a09 = kBase, a5 = kBase;
  for (double& v : a09) v *= 0.9;
  for (double& v : a5) v *= 5.0;
  // jax.grad(lambda a: jnp.sum(jax.scipy.linalg.expm(a) * w)) in f64.
  const Array jax09 = array(std::vector<double>{0.9013064441069366, -2.5662058225156694, -0.13008943467497452,
                                                0.1477549171240246, 1.4169005578931846, -1.3129501438862046,
                                                2.5838137880588454, -0.4806321111319112, 0.02033584303615878},
                            {3, 3});
  const Array jax5 = array(std::vector<double>{-3.054672553168197, 0.19810565028991656, -1.6127769476323883,
                                               0.14958210844878694, 6.455950587273429, 0.277602597554063,
                                               -0.47533661409698924, -2.5662852778505223, -3.7015865092914755},
                           {3, 3});
  CHECK(max_abs_diff(grad(loss)(array(a09, {3, 3})), jax09) < 1e-13);
  CHECK(max_abs_diff(grad(loss)(array(a5, {3, 3})), jax5) < 1e-12);
  CHECK_NOTHROW(testing::check_grads(loss, std::make_tuple(array(a09, {3, 3})), 1));
}
