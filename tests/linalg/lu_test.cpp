// graft::linalg's LU family (lu, lu_factor, lu_solve, solve, inv, det,
// slogdet): pivots and factors against SciPy's (LAPACK's getrf), square and
// rectangular, reconstruction P L U = A, residuals, derivatives against
// finite differences and against the closed forms (d log|det a| = a^-T),
// vmap against a loop, jit against eager, LAPACK's path against the small
// one, and what a singular matrix gives.
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

// A well-conditioned general batch: normal entries plus n on the diagonal.
Array general(uint64_t seed, Shape batch, int64_t n, DType dt = DType::f64) {
  Shape s = batch;
  s.push_back(n);
  s.push_back(n);
  return random::normal(random::key(seed), s, dt) + broadcast_to(static_cast<double>(n) * eye(n, dt), s);
}

// Made on use: an Array at namespace scope would touch a device before main.
Array square4() { return array<double>({{1, 2, 3, 4}, {5, 6, 7, 8.5}, {2, -1, 0, 3}, {9, 1, -2, 4}}); }

}  // namespace

TEST_CASE("linalg: lu_factor's factors and pivots are SciPy's (LAPACK getrf)", "[linalg]") {
  const Array square = square4();
  // scipy.linalg.lu_factor of the same matrices (f64).
  const auto [lu, piv] = linalg::lu_factor(square);
  CHECK(piv.dtype() == DType::i32);
  CHECK(piv.to_vector<int32_t>() == std::vector<int32_t>{3, 1, 2, 3});
  const Array scipy_lu =
      array<double>({{9.0, 1.0, -2.0, 4.0},
                     {0.5555555555555556, 5.444444444444445, 8.11111111111111, 6.277777777777778},
                     {0.2222222222222222, -0.22448979591836735, 2.2653061224489797, 3.520408163265306},
                     {0.1111111111111111, 0.346938775510204, 0.18018018018018056, 0.7432432432432421}});
  CHECK(max_abs_diff(lu, scipy_lu) < 4e-16 * 10);
  // Wide (3 x 5) and tall (5 x 3).
  const Array wide = array<double>({{1, 2, 3, 4, 5}, {3, -1, 2, 0, 1}, {4, 4, -2, 1, 0}});
  const auto [wlu, wpiv] = linalg::lu_factor(wide);
  CHECK(wpiv.to_vector<int32_t>() == std::vector<int32_t>{2, 1, 2});
  CHECK(max_abs_diff(wlu, array<double>({{4.0, 4.0, -2.0, 1.0, 0.0},
                                         {0.75, -4.0, 3.5, -0.75, 1.0},
                                         {0.25, -0.25, 4.375, 3.5625, 5.25}})) < 1e-15);
  const auto [tlu, tpiv] = linalg::lu_factor(mT(wide));
  CHECK(tpiv.to_vector<int32_t>() == std::vector<int32_t>{4, 4, 4});
  CHECK(max_abs_diff(tlu, array<double>({{5.0, 1.0, 0.0},
                                         {0.2, 2.8, 4.0},
                                         {0.4, -0.5, 6.0},
                                         {0.8, -0.28571428571428575, 0.3571428571428572},
                                         {0.6000000000000001, 0.5, -0.6666666666666666}})) < 1e-15);
  // lu: a = p l u with p a permutation matrix, l unit lower m x k, u upper k x n.
  for (const Array& a : {square, wide, mT(wide)}) {
    const auto [p, l, u] = linalg::lu(a);
    const int64_t m = a.shape()[0], n = a.shape()[1], k = std::min(m, n);
    CHECK(p.shape() == Shape{m, m});
    CHECK(l.shape() == Shape{m, k});
    CHECK(u.shape() == Shape{k, n});
    CHECK(max_abs_diff(matmul(p, matmul(l, u)), a) < 1e-14);
    CHECK(max_abs_diff(matmul(p, mT(p)), eye(m, DType::f64)) == 0);
    CHECK(max_abs_diff(diagonal(l), ones({k}, DType::f64)) == 0);
    CHECK(max_abs_diff(triu(u), u) == 0);
  }
  CHECK_THROWS_WITH(linalg::lu_factor(zeros({3})), Catch::Contains("linalg::lu_factor"));
}

TEST_CASE("linalg: solve, inv, lu_solve, det and slogdet", "[linalg]") {
  const Array square = square4();
  const Array b = array<double>({{1, 0}, {2, 1}, {-1, 3}, {0.5, 2}});
  const Array x = linalg::solve(square, b);
  CHECK(max_abs_diff(matmul(square, x), b) < 1e-13);
  CHECK(max_abs_diff(linalg::lu_solve(linalg::lu_factor(square), b), x) == 0);
  const Array v = array<double>({1, 2, 3, 4});
  CHECK(linalg::solve(square, v).shape() == Shape{4});
  CHECK(max_abs_diff(matmul(square, linalg::solve(square, v)), v) < 1e-13);
  CHECK(max_abs_diff(matmul(square, linalg::inv(square)), eye(4, DType::f64)) < 1e-14);
  // det -82.5 exactly (NumPy: -82.49999999999989); slogdet from the same factors.
  CHECK(linalg::det(square).item<double>() == Approx(-82.5).epsilon(1e-14));
  const auto [s, logdet] = linalg::slogdet(square);
  CHECK(s.item<double>() == -1);
  CHECK(logdet.item<double>() == Approx(std::log(82.5)).epsilon(1e-15));
  // The closed forms of 1x1, 2x2 (slogdet, det) and 3x3 (det).
  CHECK(linalg::det(array<double>({{3, 1}, {4, 2}})).item<double>() == 2);
  CHECK(linalg::det(array<double>({{2, 0, 1}, {1, 3, 2}, {1, 1, 2}})).item<double>() == 6);
  CHECK(linalg::slogdet(array<double>({{-2.0}})).first.item<double>() == -1);
  CHECK(linalg::slogdet(array<double>({{1, 2}, {3, 4}})).second.item<double>() == Approx(std::log(2.0)));
  // Batches broadcast: a [2, 4, 4] with b [4, 2]; a [4, 4] with b [3, 4, 2]; det over the batch.
  const Array ab = general(1, {2}, 4);
  const Array xb = linalg::solve(ab, b);
  CHECK(xb.shape() == Shape{2, 4, 2});
  CHECK(max_abs_diff(matmul(ab, xb), broadcast_to(b, {2, 4, 2})) < 1e-13);
  const Array bb = random::normal(random::key(2), {3, 4, 2}, DType::f64);
  CHECK(max_abs_diff(matmul(square, linalg::solve(square, bb)), bb) < 1e-12);
  CHECK(linalg::det(ab).shape() == Shape{2});
  CHECK(linalg::det(ab)[1].item<double>() == Approx(linalg::det(ab[1]).item<double>()).epsilon(1e-14));
  // f32 and integers (the default float dtype).
  const Array af = astype(general(3, {}, 6), DType::f32),
              bf = astype(random::normal(random::key(4), {6, 3}), DType::f32);
  CHECK(linalg::solve(af, bf).dtype() == DType::f32);
  CHECK(max_abs_diff(matmul(af, linalg::solve(af, bf)), bf) < 1e-5);
  CHECK(linalg::det(array<int32_t>({{2, 1}, {1, 1}})).dtype() == default_float_dtype());
  // Errors name the function and the shapes.
  CHECK_THROWS_WITH(linalg::solve(square, zeros({3, 2}, DType::f64)),
                    Catch::Contains("linalg::solve") && Catch::Contains("f64[3,2]"));
  CHECK_THROWS_WITH(linalg::det(zeros({2, 3})), Catch::Contains("linalg::det") && Catch::Contains("square"));
  CHECK_THROWS_AS(linalg::lu_solve({square, zeros({4}, DType::f64)}, b), ShapeError);
}

TEST_CASE("linalg: a singular matrix gives sign 0, -inf and infs as JAX, not an exception", "[linalg]") {
  const Array sing = array<double>({{1, 2, 3}, {2, 4, 6}, {1, 0, 1}});
  const auto [s, logdet] = linalg::slogdet(array<double>({{1, 2, 3, 4}, {2, 4, 6, 8}, {1, 0, 1, 0}, {0, 1, 1, 2}}));
  CHECK(s.item<double>() == 0);
  CHECK(logdet.item<double>() == -std::numeric_limits<double>::infinity());
  CHECK(linalg::det(sing).item<double>() == 0);
  // The factorization completes (a zero pivot is left in U), and the solve divides by it.
  const auto [lu, piv] = linalg::lu_factor(sing);
  CHECK(diagonal(lu).to_vector<double>().back() == 0);
  bool finite = true;
  for (double x : linalg::solve(sing, array<double>({1, 1, 1})).to_vector<double>())
    finite = finite && std::isfinite(x);
  CHECK_FALSE(finite);
}

TEST_CASE("linalg: derivatives of lu, solve, inv, det and slogdet", "[linalg]") {
  const Array a = general(11, {}, 4);
  const Array b = random::normal(random::key(12), {4, 2}, DType::f64);
  // The factorization itself (its first output), square and rectangular.
  auto lu_of = [](const Array& m) { return linalg::lu_factor(m).first; };
  CHECK_NOTHROW(testing::check_grads(lu_of, std::make_tuple(a), 2));
  CHECK_NOTHROW(testing::check_grads(lu_of, std::make_tuple(random::normal(random::key(13), {3, 5}, DType::f64)), 1));
  CHECK_NOTHROW(testing::check_grads(lu_of, std::make_tuple(random::normal(random::key(14), {5, 3}, DType::f64)), 1));
  auto solve = [](const Array& m, const Array& r) { return linalg::solve(m, r); };
  CHECK_NOTHROW(testing::check_grads(solve, std::make_tuple(a, b), 2));
  auto inv = [](const Array& m) { return linalg::inv(m); };
  CHECK_NOTHROW(testing::check_grads(inv, std::make_tuple(a), 1));
  // d log|det a| / da = a^-T, and d det a / da = det(a) a^-T (Jacobi's formula).
  auto logabsdet = [](const Array& m) { return linalg::slogdet(m).second; };
  CHECK(max_abs_diff(grad(logabsdet)(a), mT(linalg::inv(a))) < 1e-14);
  auto det = [](const Array& m) { return linalg::det(m); };
  for (int64_t n : {2, 3, 5}) {
    INFO("n = " << n);
    const Array an = general(15 + static_cast<uint64_t>(n), {}, n);
    CHECK(max_abs_diff(grad(det)(an), linalg::det(an) * mT(linalg::inv(an))) < 1e-11 * linalg::det(an).item<double>());
    CHECK_NOTHROW(testing::check_grads(det, std::make_tuple(an), 2));
  }
  CHECK_NOTHROW(testing::check_grads(logabsdet, std::make_tuple(a), 2));
}

TEST_CASE("linalg: the LU family under vmap and jit", "[linalg]") {
  const Array a = general(21, {3}, 5);
  const Array b = random::normal(random::key(22), {3, 5}, DType::f64);
  const Array x = vmap([](const Array& m, const Array& v) { return linalg::solve(m, v); })(a, b);
  const Array d = vmap([](const Array& m) { return linalg::det(m); })(a);
  const Array g = vmap(grad([](const Array& m) { return linalg::slogdet(m).second; }))(a);
  for (int64_t i = 0; i < 3; ++i) {
    CHECK(max_abs_diff(x[i], linalg::solve(a[i], b[i])) == 0);
    CHECK(max_abs_diff(d[i], linalg::det(a[i])) == 0);
    CHECK(max_abs_diff(g[i], grad([](const Array& m) { return linalg::slogdet(m).second; })(a[i])) < 1e-15);
  }
  // lu's three outputs under vmap, one operand of a two-operand function batched.
  const auto batched = vmap([](const Array& m) {
    auto [p, l, u] = linalg::lu(m);
    return matmul(p, matmul(l, u));
  })(a);
  CHECK(max_abs_diff(batched, a) < 1e-13);
  for (Backend be : {Backend::interpreter, Backend::cpu}) {
    INFO(static_cast<int>(be));
    auto f = jit([](const Array& m,
                    const Array& v) { return linalg::solve(m, v) * expand_dims(expand_dims(linalg::det(m), -1), -1); },
                 JitOptions{.backend = be});
    // A batch of vectors is a batch of one-column matrices (JAX since 0.5): b[..., None].
    const Array bm = expand_dims(b, -1);
    CHECK(max_abs_diff(f(a, bm), linalg::solve(a, bm) * reshape(linalg::det(a), {3, 1, 1})) < 1e-12);
  }
}

TEST_CASE("linalg: lu from 128 rows (LAPACK's getrf) gives what small ones do", "[linalg]") {
  for (DType dt : {DType::f64, DType::f32}) {
    INFO(dtype_name(dt));
    for (Shape s : {Shape{130, 130}, Shape{140, 129}, Shape{129, 140}}) {
      const Array a = random::normal(random::key(31), s, dt);
      const auto [p, l, u] = linalg::lu(a);
      const double tol = dt == DType::f64 ? 1e-12 : 1e-4;
      CHECK(max_abs_diff(matmul(p, matmul(l, u)), a) < tol * 10);
      // Partial pivoting bounds the multipliers by 1.
      CHECK(max_abs_diff(clip(l, -1.0, 1.0), l) == 0);
    }
  }
  // Rows of a diagonally dominant matrix in reverse order: partial pivoting
  // must find each diagonal entry, so p is the reversal (pivots made 0-based
  // and turned into a permutation correctly on both paths).
  for (int64_t n : {8, 130}) {
    INFO("n = " << n);
    const Array dominant = general(32, {}, n);
    const auto [p, l, u] = linalg::lu(flip(dominant, {0}));
    CHECK(max_abs_diff(p, flip(eye(n, DType::f64), {0})) == 0);
    CHECK(max_abs_diff(matmul(l, u), dominant) < 1e-12);
  }
}

TEST_CASE("linalg: matrix_power by repeated squaring, negative powers through inv", "[linalg]") {
  const Array a = array<double>({{1, 1}, {1, 0}});  // Fibonacci
  CHECK(linalg::matrix_power(a, 10).to_vector<double>() == std::vector<double>{89, 55, 55, 34});
  CHECK(linalg::matrix_power(a, 0).to_vector<double>() == std::vector<double>{1, 0, 0, 1});
  CHECK(linalg::matrix_power(a, 1).to_vector<double>() == std::vector<double>{1, 1, 1, 0});
  CHECK(max_abs_diff(linalg::matrix_power(a, -3), linalg::inv(matmul(a, matmul(a, a)))) < 1e-14);
  const Array batch = general(61, {3}, 4);
  const Array p5 = linalg::matrix_power(batch, 5);
  Array loop = batch;
  for (int i = 0; i < 4; ++i) loop = matmul(loop, batch);
  CHECK(max_abs_diff(p5, loop) < 1e-9 * max(abs(loop)).item<double>());
  CHECK_NOTHROW(testing::check_grads([](const Array& m) { return linalg::matrix_power(m, 3); },
                                     std::make_tuple(general(62, {}, 3)), 2));
  CHECK_THROWS_AS(linalg::matrix_power(zeros({2, 3}), 2), ShapeError);
}

TEST_CASE("linalg: det's gradient at a singular matrix is the cofactor matrix, as JAX's", "[linalg]") {
  // Rank 3 of 4 (row 4 = row 1 + row 3): the gradient is the cofactor matrix (JAX's and the minors' values).
  const Array rank3 = array<double>({{1, 2, 3, 4}, {0, 1, -1, 2}, {1, 0, 1, 0}, {2, 2, 4, 4}});
  auto det = [](const Array& m) { return linalg::det(m); };
  const Array cofactors = array<double>({{0, -8, 0, 4}, {0, 0, 0, 0}, {0, -8, 0, 4}, {0, 8, 0, -4}});
  CHECK(max_abs_diff(grad(det)(rank3), cofactors) < 1e-12);
  // Rank 2: every cofactor is zero.
  const Array rank2 = array<double>({{1, 2, 3, 4}, {2, 4, 6, 8}, {1, 0, 1, 0}, {0, 1, 1, 2}});
  CHECK(max_abs_diff(grad(det)(rank2), zeros({4, 4}, DType::f64)) == 0);
  // Nonsingular and batched: det(a) a^-T, and forward mode agrees with reverse.
  const Array a = general(71, {2}, 5);
  const Array g = vmap(grad(det))(a);
  for (int64_t i = 0; i < 2; ++i)
    CHECK(max_abs_diff(g[i], linalg::det(a[i]) * mT(linalg::inv(a[i]))) <
          1e-10 * std::fabs(linalg::det(a[i]).item<double>()));
  const Array t = random::normal(random::key(72), {5, 5}, DType::f64);
  const double forward = jvp(det, std::make_tuple(a[0]), std::make_tuple(t)).second.item<double>();
  CHECK(forward == Approx(sum(g[0] * t).item<double>()).epsilon(1e-12));
}
