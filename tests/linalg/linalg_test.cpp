// graft::linalg's cholesky, solve_triangular, cho_factor and cho_solve:
// values against exact factors and residuals, every flag combination of
// triangular_solve against a dense solve, derivatives against finite
// differences (testing::check_grads, to second order), vmap against a loop,
// jit against eager, and NaNs where JAX gives them.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "api/dispatch.h"
#include "graft/graft.h"
#include "graft/testing.h"
#include "linalg/linalg_helpers.h"

using namespace graft;
using graft::test::max_abs_diff;
using graft::test::mT;

namespace {

// A well-conditioned symmetric positive definite batch: x x^T + n I.
Array spd(uint64_t seed, Shape batch, int64_t n, DType dt = DType::f64) {
  Shape s = batch;
  s.push_back(n);
  s.push_back(n);
  const Array x = random::normal(random::key(seed), s, dt);
  std::vector<int> perm;
  for (size_t i = 0; i < s.size(); ++i) perm.push_back(static_cast<int>(i));
  std::swap(perm[s.size() - 1], perm[s.size() - 2]);
  std::vector<double> id(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i) id[static_cast<size_t>(i * n + i)] = static_cast<double>(n);
  return matmul(x, transpose(x, perm)) + broadcast_to(astype(array(id, {n, n}), dt), s);
}

}  // namespace

TEST_CASE("linalg: cholesky gives the exact factor, reconstructs, and NaNs a matrix that is not positive definite",
          "[linalg]") {
  // A classic integer example: the factor is exact.
  const Array a = array<double>({{4, 12, -16}, {12, 37, -43}, {-16, -43, 98}});
  CHECK(linalg::cholesky(a).to_vector<double>() == std::vector<double>{2, 0, 0, 6, 1, 0, -8, 5, 3});
  for (DType dt : {DType::f64, DType::f32}) {
    INFO(dtype_name(dt));
    const Array b = spd(3, {2, 3}, 5, dt);
    const Array l = linalg::cholesky(b);
    CHECK(l.shape() == Shape{2, 3, 5, 5});
    CHECK(max_abs_diff(matmul(l, mT(l)), b) < (dt == DType::f64 ? 1e-12 : 2e-4) * 10);
    CHECK(max_abs_diff(tril(l), l) == 0);  // zeros above the diagonal
  }
  // Not positive definite: NaNs in the lower triangle, zeros above, as JAX's.
  const std::vector<double> bad = linalg::cholesky(array<double>({{1, 2}, {2, 1}})).to_vector<double>();
  CHECK((std::isnan(bad[0]) && bad[1] == 0 && std::isnan(bad[2]) && std::isnan(bad[3])));
  // Integers compute in the default float dtype; shape errors name the function.
  CHECK(linalg::cholesky(array<int32_t>({{4, 2}, {2, 2}})).dtype() == default_float_dtype());
  CHECK_THROWS_WITH(linalg::cholesky(zeros({2, 3})), Catch::Contains("linalg::cholesky") && Catch::Contains("square"));
  CHECK_THROWS_AS(linalg::cholesky(zeros({3})), ShapeError);
}

TEST_CASE("linalg: triangular_solve in every form equals a dense solve", "[linalg]") {
  const int64_t m = 4, n = 3;
  const Array raw = random::normal(random::key(11), {m, m}, DType::f64) + 4.0 * eye(m, DType::f64);
  const Array b_left = random::normal(random::key(12), {m, n}, DType::f64);
  const Array b_right = random::normal(random::key(13), {n, m}, DType::f64);
  for (int lower : {0, 1})
    for (int transpose_a : {0, 1})
      for (int unit : {0, 1})
        for (int left : {0, 1}) {
          INFO("lower " << lower << " transpose " << transpose_a << " unit " << unit << " left " << left);
          // The matrix the op reads: a's triangle, its diagonal ones if unit.
          Array tri = lower ? tril(raw, unit ? -1 : 0) : triu(raw, unit ? 1 : 0);
          if (unit) tri = tri + eye(m, DType::f64);
          const Array op_a = transpose_a ? mT(tri) : tri;
          const Array b = left ? b_left : b_right;
          auto solve = [&](const Array& a_, const Array& b_) {
            return detail::bind1(ir::Op::triangular_solve, {a_, b_},
                                 {{"left_side", int64_t{left}},
                                  {"lower", int64_t{lower}},
                                  {"transpose_a", int64_t{transpose_a}},
                                  {"conjugate_a", int64_t{0}},
                                  {"unit_diagonal", int64_t{unit}}},
                                 std::source_location::current());
          };
          // raw, not tri: the op must read only its triangle.
          const Array x = solve(raw, b);
          CHECK(max_abs_diff(left ? matmul(op_a, x) : matmul(x, op_a), b) < 1e-12);
          // Derivatives in a and b, forward and reverse, to second order.
          CHECK_NOTHROW(testing::check_grads(solve, std::make_tuple(raw, b), 2));
        }
}

TEST_CASE("linalg: solve_triangular, cho_factor and cho_solve as jax.scipy.linalg", "[linalg]") {
  const Array a = spd(5, {}, 4);
  const Array b = random::normal(random::key(6), {4, 2}, DType::f64);
  const Array v = random::normal(random::key(7), {4}, DType::f64);
  const Array l = linalg::cholesky(a);
  // L y = b, then L^T x = y: a x = b.
  const Array y = linalg::solve_triangular(l, b, true);
  const Array x = linalg::solve_triangular(l, y, true, 1);
  CHECK(max_abs_diff(matmul(a, x), b) < 1e-12);
  // A vector right-hand side stays a vector.
  const Array xv = linalg::solve_triangular(l, v, true);
  CHECK(xv.shape() == Shape{4});
  CHECK(max_abs_diff(matmul(l, xv), v) < 1e-12);
  for (bool lower : {true, false}) {
    INFO("lower " << lower);
    const auto cf = linalg::cho_factor(a, lower);
    CHECK(cf.second == lower);
    CHECK(max_abs_diff(lower ? matmul(cf.first, mT(cf.first)) : matmul(mT(cf.first), cf.first), a) < 1e-12);
    CHECK(max_abs_diff(matmul(a, linalg::cho_solve(cf, b)), b) < 1e-12);
    CHECK(max_abs_diff(matmul(a, linalg::cho_solve(cf, v)), v) < 1e-12);
  }
  CHECK_THROWS_AS(linalg::solve_triangular(l, b, true, 3), Error);
  CHECK_THROWS_WITH(linalg::solve_triangular(l, zeros({3, 2}, DType::f64), true), Catch::Contains("triangular_solve"));
}

TEST_CASE("linalg: cholesky's derivatives match finite differences, and a GP-style log det", "[linalg]") {
  const Array a = spd(21, {}, 4);
  auto chol = [](const Array& m) { return linalg::cholesky(m); };
  CHECK_NOTHROW(testing::check_grads(chol, std::make_tuple(a), 2));
  // d/da log det a = a^-1 (symmetric a): through the factor, log det a = 2 sum log diag L.
  auto logdet = [](const Array& m) {
    const Array lf = linalg::cholesky(m);
    return 2.0 * sum(log(diagonal(lf)));
  };
  const Array g = grad(logdet)(a);
  const Array inv = linalg::cho_solve(linalg::cho_factor(a), eye(4, DType::f64));
  CHECK(max_abs_diff(g, inv) < 1e-10);
  CHECK_NOTHROW(testing::check_grads(logdet, std::make_tuple(a), 2));
}

TEST_CASE("linalg: vmap equals a loop and jit equals eager", "[linalg]") {
  const Array a = spd(31, {3}, 4);
  const Array b = random::normal(random::key(32), {3, 4, 2}, DType::f64);
  const Array batched = vmap([](const Array& m) { return linalg::cholesky(m); })(a);
  auto row = [](const Array& x, int64_t i) { return x[i]; };
  for (int64_t i = 0; i < 3; ++i) CHECK(max_abs_diff(row(batched, i), linalg::cholesky(row(a, i))) == 0);
  // triangular_solve with one operand batched (b) and both batched.
  const Array l0 = linalg::cholesky(row(a, 0));
  const Array one = vmap([&](const Array& bb) { return linalg::solve_triangular(l0, bb, true); })(b);
  const Array both = vmap(
      [](const Array& m, const Array& bb) { return linalg::solve_triangular(linalg::cholesky(m), bb, true); })(a, b);
  for (int64_t i = 0; i < 3; ++i) {
    CHECK(max_abs_diff(row(one, i), linalg::solve_triangular(l0, row(b, i), true)) == 0);
    CHECK(max_abs_diff(row(both, i), linalg::solve_triangular(linalg::cholesky(row(a, i)), row(b, i), true)) == 0);
  }
  // vmap of grad of the log det equals a loop.
  auto logdet = [](const Array& m) { return 2.0 * sum(log(diagonal(linalg::cholesky(m)))); };
  const Array gs = vmap(grad(logdet))(a);
  for (int64_t i = 0; i < 3; ++i) CHECK(max_abs_diff(row(gs, i), grad(logdet)(row(a, i))) < 1e-13);
  for (Backend be : {Backend::interpreter, Backend::cpu}) {
    auto f = jit([](const Array& m, const Array& bb) { return linalg::cho_solve(linalg::cho_factor(m), bb); },
                 JitOptions{.backend = be});
    CHECK(max_abs_diff(f(a, b), linalg::cho_solve(linalg::cho_factor(a), b)) == 0);
  }
}

TEST_CASE("linalg: matrices from 128 rows (LAPACK's kernels) give what small ones do", "[linalg]") {
  // Above the size where the kernels switch from Eigen to OpenBLAS's LAPACK (when graft has it).
  const int64_t n = 130;
  for (DType dt : {DType::f64, DType::f32}) {
    INFO(dtype_name(dt));
    const Array a = spd(41, {2}, n, dt);
    const Array l = linalg::cholesky(a);
    const double tol = dt == DType::f64 ? 1e-10 : 2e-3;
    CHECK(max_abs_diff(matmul(l, mT(l)), a) < tol * static_cast<double>(n));
    CHECK(max_abs_diff(tril(l), l) == 0);
    const Array b = random::normal(random::key(42), {2, n, 3}, dt);
    const Array br = random::normal(random::key(43), {2, 3, n}, dt);
    for (int lower : {0, 1})
      for (int transpose_a : {0, 1})
        for (int left : {0, 1}) {
          INFO("lower " << lower << " transpose " << transpose_a << " left " << left);
          const Array tri = lower ? l : mT(l);  // the factor or its transpose: well conditioned
          const Array op_a = transpose_a ? mT(tri) : tri;
          const Array rhs = left ? b : br;
          const Array x = detail::bind1(ir::Op::triangular_solve, {tri, rhs},
                                        {{"left_side", int64_t{left}},
                                         {"lower", int64_t{lower}},
                                         {"transpose_a", int64_t{transpose_a}},
                                         {"conjugate_a", int64_t{0}},
                                         {"unit_diagonal", int64_t{0}}},
                                        std::source_location::current());
          CHECK(max_abs_diff(left ? matmul(op_a, x) : matmul(x, op_a), rhs) < tol * 10);
        }
  }
  // Not positive definite at this size (LAPACK's path): the same.
  const Array bad = -spd(44, {}, n);
  const std::vector<double> l = linalg::cholesky(bad).to_vector<double>();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) REQUIRE((j > i ? l[i * n + j] == 0 : std::isnan(l[i * n + j])));
}
