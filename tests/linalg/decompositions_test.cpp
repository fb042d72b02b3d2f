// graft::linalg's eigh, eigvalsh, qr, svd and svdvals (LAPACK's syevd,
// geqrf/orgqr and gesdd, serial and batched in parallel). eigh: eigenvalues
// against NumPy's, reconstruction with orthonormal eigenvectors in f64 and
// f32, the triangle the primitive reads, dw_k/da = v_k v_k^T, repeated
// eigenvalues as JAX (w' finite, v' not). qr and svd: factors against
// NumPy's (LAPACK's signs too), reduced and complete, square, tall and wide;
// ds_k/da = u_k v_k^T. Derivatives against finite differences where JAX
// defines them, errors where it does not; vmap against a loop, jit against eager.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "api/dispatch.h"
#include "graft/graft.h"
#include "graft/testing.h"
#include "linalg/linalg_helpers.h"

using namespace graft;
using graft::test::max_abs_diff;
using graft::test::mT;

namespace {

Array symmetric(uint64_t seed, Shape batch, int64_t n, DType dt = DType::f64) {
  Shape s = batch;
  s.push_back(n);
  s.push_back(n);
  const Array x = random::normal(random::key(seed), s, dt);
  return (x + mT(x)) * 0.5;
}

// a's shape with its last two axes k x k.
Shape batch_shape(const Array& a, int64_t k) {
  Shape s = a.shape();
  s[s.size() - 1] = k;
  s[s.size() - 2] = k;
  return s;
}

// v diag(w) v^T.
Array reconstruct(const Array& w, const Array& v) { return matmul(v * expand_dims(w, -2), mT(v)); }

void check_decomposition(const Array& a, double tol) {
  const auto [w, v] = linalg::eigh(a);
  const int64_t n = a.shape().back();
  CHECK(max_abs_diff(reconstruct(w, v), a) < tol);
  CHECK(max_abs_diff(matmul(mT(v), v), broadcast_to(eye(n, a.dtype()), a.shape())) < tol);
  // Ascending.
  const Shape& s = w.shape();
  Shape lo(s.size(), 0), hi = s, lo1(s.size(), 0);
  hi.back() = n - 1;
  lo1.back() = 1;
  CHECK(all(slice(w, lo, hi) <= slice(w, lo1, s)).item<bool>());
}

}  // namespace

TEST_CASE("linalg: eigh's eigenvalues are NumPy's and the decomposition reconstructs", "[linalg]") {
  const Array a = array<double>({{4, 1, -2, 0.5}, {1, 3, 0, 1}, {-2, 0, 5, -1}, {0.5, 1, -1, 2}});
  // np.linalg.eigh(a)[0]
  const Array numpy_w = array<double>({1.047138640929087, 2.3609454269745447, 3.602574400339762, 6.989341531756605});
  CHECK(max_abs_diff(linalg::eigvalsh(a), numpy_w) < 8 * 4.5e-16 * 7);
  check_decomposition(a, 1e-14);
  // np.linalg.eigh(a)[1]: the eigenvectors with LAPACK's signs (JAX's are the same).
  const Array numpy_v =
      array<double>({{-0.2695752192603055, -0.7174994986878304, 0.22717960250456745, -0.6007604337415514},
                     {0.5187947492237331, 0.23482246109287186, 0.7939353884583266, -0.21301882287181995},
                     {-0.3245014994934472, -0.32874040391810944, 0.5049175736331961, 0.7291685453272297},
                     {-0.7435589997876064, 0.5674351310773387, 0.2512255381042264, -0.24904440338690398}});
  CHECK(max_abs_diff(linalg::eigh(a).second, numpy_v) < 1e-14);
  // [[2, 1], [1, 2]]: w = (1, 3), v = (1, -1) / sqrt 2 and (1, 1) / sqrt 2 up to sign.
  const auto [w2, v2] = linalg::eigh(array<double>({{2, 1}, {1, 2}}));
  CHECK(max_abs_diff(w2, array<double>({1, 3})) < 1e-15);
  CHECK(max_abs_diff(abs(v2), full({2, 2}, std::sqrt(0.5), DType::f64)) < 1e-15);
  for (DType dt : {DType::f64, DType::f32}) {
    INFO(dtype_name(dt));
    const double tol = dt == DType::f64 ? 1e-13 : 2e-5;
    check_decomposition(symmetric(1, {2, 3}, 5, dt), tol);
    check_decomposition(symmetric(2, {}, 130, dt), tol * 40);  // LAPACK's syevd
    check_decomposition(symmetric(3, {2}, 64, dt), tol * 20);  // Eigen, batches in parallel
  }
  // jnp.linalg.eigh symmetrizes: only (a + a^T) / 2 matters.
  const Array b = random::normal(random::key(4), {4, 4}, DType::f64);
  CHECK(max_abs_diff(linalg::eigvalsh(b), linalg::eigvalsh((b + mT(b)) * 0.5)) == 0);
  CHECK(linalg::eigvalsh(array<int32_t>({{2, 1}, {1, 2}})).dtype() == default_float_dtype());
  CHECK_THROWS_WITH(linalg::eigh(zeros({2, 3})), Catch::Contains("linalg::eigh") && Catch::Contains("square"));
}

TEST_CASE("linalg: the eigh primitive reads the triangle `lower` names", "[linalg]") {
  const Array s = symmetric(5, {}, 6);
  for (int64_t n : {6, 130}) {
    INFO("n = " << n);
    const Array sym = n == 6 ? s : symmetric(6, {}, n);
    // Garbage in the triangle that is not read.
    const Array junk = random::normal(random::key(7), sym.shape(), DType::f64) * 100.0;
    for (int64_t lower : {0, 1}) {
      const Array a = lower ? tril(sym) + triu(junk, 1) : triu(sym) + tril(junk, -1);
      const std::vector<Array> vw =
          detail::bind(ir::Op::eigh, {a}, {{"lower", lower}}, std::source_location::current());
      CHECK(max_abs_diff(reconstruct(vw[1], vw[0]), sym) < 1e-12 * static_cast<double>(n));
    }
  }
}

TEST_CASE("linalg: eigh's derivatives are JAX's", "[linalg]") {
  const Array a = symmetric(11, {}, 4);
  // Each eigenvalue's gradient is v_k v_k^T (simple eigenvalues).
  const auto [w, v] = linalg::eigh(a);
  for (int64_t k = 0; k < 4; ++k) {
    auto wk = [k](const Array& m) { return linalg::eigvalsh(m)[k]; };
    const Array vk = slice(v, {0, k}, {4, k + 1});
    CHECK(max_abs_diff(grad(wk)(a), matmul(vk, mT(vk))) < 1e-13);
  }
  CHECK_NOTHROW(testing::check_grads([](const Array& m) { return linalg::eigvalsh(m); }, std::make_tuple(a), 2));
  // Eigenvectors up to sign: their outer products are sign-free and smooth.
  auto projections = [](const Array& m) {
    const Array vv = linalg::eigh(m).second;
    return vv * vv;
  };
  CHECK_NOTHROW(testing::check_grads(projections, std::make_tuple(a), 2));
  // Repeated eigenvalues (the identity plus a rank-one term: 1, 1, 1, 5):
  // the trace's gradient is still the identity; the eigenvectors' are not finite, as JAX's.
  const Array u = array<double>({1, 1, 1, 1}) * 0.5;
  const Array degenerate = eye(4, DType::f64) + 4.0 * matmul(expand_dims(u, 1), expand_dims(u, 0));
  CHECK(max_abs_diff(grad([](const Array& m) { return sum(linalg::eigvalsh(m)); })(degenerate), eye(4, DType::f64)) <
        1e-14);
  const Array top = grad([](const Array& m) { return linalg::eigvalsh(m)[3]; })(degenerate);
  CHECK(max_abs_diff(top, matmul(expand_dims(u, 1), expand_dims(u, 0))) < 1e-14);  // the simple eigenvalue 5
  bool finite = true;
  const Array dv = jvp([](const Array& m) { return linalg::eigh(m).second; }, std::make_tuple(degenerate),
                       std::make_tuple(symmetric(12, {}, 4)))
                       .second;
  for (double x : dv.to_vector<double>()) finite = finite && std::isfinite(x);
  CHECK_FALSE(finite);
}

TEST_CASE("linalg: eigh under vmap and jit", "[linalg]") {
  const Array a = symmetric(21, {3}, 5);
  const Array w = vmap([](const Array& m) { return linalg::eigvalsh(m); })(a);
  const Array g = vmap(grad([](const Array& m) { return linalg::eigvalsh(m)[4]; }))(a);
  for (int64_t i = 0; i < 3; ++i) {
    CHECK(max_abs_diff(w[i], linalg::eigvalsh(a[i])) == 0);
    CHECK(max_abs_diff(g[i], grad([](const Array& m) { return linalg::eigvalsh(m)[4]; })(a[i])) < 1e-15);
  }
  for (Backend be : {Backend::interpreter, Backend::cpu}) {
    INFO(static_cast<int>(be));
    auto f = jit(
        [](const Array& m) {
          const auto [ww, vv] = linalg::eigh(m);
          return reconstruct(ww, vv);
        },
        JitOptions{.backend = be});
    CHECK(max_abs_diff(f(a), a) < 1e-13);
  }
}

TEST_CASE("linalg: qr is NumPy's (LAPACK's geqrf and orgqr, signs included)", "[linalg]") {
  const Array a = array<double>({{1, 2, 0}, {3, -1, 2}, {0.5, 4, 1}, {2, 0, -3}});
  // np.linalg.qr(a)
  const Array numpy_q = array<double>({{-0.2649064714130087, 0.4218276422036171, 0.05821988947955204},
                                       {-0.7947194142390263, -0.264600975564087, -0.5406777333062288},
                                       {-0.13245323570650439, 0.866664064891068, -0.16427937806633316},
                                       {-0.5298129428260175, -0.03067837397844489, 0.8229764997361504}});
  const Array numpy_r = array<double>({{-3.774917217635375, -0.2649064714130085, -0.13245323570650439},
                                       {0.0, 4.574912519535593, 0.4294972356982285},
                                       {0.0, 0.0, -3.714564343887242}});
  const auto [q, r] = linalg::qr(a);
  CHECK(max_abs_diff(q, numpy_q) < 1e-15);
  CHECK(max_abs_diff(r, numpy_r) < 1e-14);
  // Complete: q 4x4 orthogonal, r 4x3 with a zero last row; "r" gives r alone.
  const auto [qc, rc] = linalg::qr(a, "complete");
  CHECK(qc.shape() == Shape{4, 4});
  CHECK(max_abs_diff(matmul(mT(qc), qc), eye(4, DType::f64)) < 1e-15);
  CHECK(max_abs_diff(matmul(qc, rc), a) < 1e-14);
  CHECK(max_abs_diff(slice(rc, {0, 0}, {3, 3}), numpy_r) < 1e-14);
  CHECK(max_abs_diff(linalg::qr(a, "r").second, numpy_r) < 1e-14);
  // Both paths (Eigen below 128 rows, LAPACK from 128) agree with each other through
  // reconstruction, orthonormality, r's triangle, and the sign rule they share.
  for (DType dt : {DType::f64, DType::f32}) {
    INFO(dtype_name(dt));
    const double tol = dt == DType::f64 ? 1e-13 : 1e-5;
    for (Shape s : {Shape{2, 6, 4}, Shape{3, 5}, Shape{140, 130}, Shape{130, 140}}) {
      INFO(ir::shape_str(s));
      const Array x = random::normal(random::key(9), s, dt);
      for (const char* mode : {"reduced", "complete"}) {
        const auto [qq, rr] = linalg::qr(x, mode);
        const int64_t k = qq.shape().back();
        CHECK(max_abs_diff(matmul(qq, rr), x) < tol * 20);
        CHECK(max_abs_diff(matmul(mT(qq), qq), broadcast_to(eye(k, dt), batch_shape(qq, k))) < tol * 20);
        CHECK(max_abs_diff(triu(rr), rr) == 0);
      }
    }
  }
  CHECK_THROWS_WITH(linalg::qr(a, "raw"), Catch::Contains("linalg::qr") && Catch::Contains("raw"));
  CHECK_THROWS_AS(linalg::qr(zeros({3})), ShapeError);
}

TEST_CASE("linalg: qr's derivatives are JAX's, where JAX defines them", "[linalg]") {
  const Array tall = random::normal(random::key(31), {5, 3}, DType::f64);
  const Array square = random::normal(random::key(32), {4, 4}, DType::f64);
  auto q_of = [](const Array& m) { return linalg::qr(m).first; };
  auto r_of = [](const Array& m) { return linalg::qr(m).second; };
  for (const Array& x : {tall, square}) {
    CHECK_NOTHROW(testing::check_grads(q_of, std::make_tuple(x), 2));
    CHECK_NOTHROW(testing::check_grads(r_of, std::make_tuple(x), 2));
  }
  // Wide matrices and the complete factorization of a tall one: no rule, as in JAX.
  CHECK_THROWS_WITH(jvp(q_of, std::make_tuple(mT(tall)), std::make_tuple(mT(tall))),
                    Catch::Contains("qr") && Catch::Contains("fewer rows than columns"));
  CHECK_THROWS_WITH(
      jvp([](const Array& m) { return linalg::qr(m, "complete").first; }, std::make_tuple(tall), std::make_tuple(tall)),
      Catch::Contains("full_matrices"));
  // vmap equals a loop; jit equals eager.
  const Array batch = random::normal(random::key(33), {3, 4, 3}, DType::f64);
  const Array rs = vmap(r_of)(batch);
  for (int64_t i = 0; i < 3; ++i) CHECK(max_abs_diff(rs[i], r_of(batch[i])) == 0);
  auto jq = jit(q_of, JitOptions{.backend = Backend::cpu});
  CHECK(max_abs_diff(jq(batch), q_of(batch)) == 0);
}

TEST_CASE("linalg: svd is NumPy's (LAPACK's gesdd, signs included) and reconstructs", "[linalg]") {
  const Array a = array<double>({{1, 2, 0}, {3, -1, 2}, {0.5, 4, 1}, {2, 0, -3}});
  // np.linalg.svd(a, full_matrices=False)
  const Array numpy_s = array<double>({4.657501914592004, 3.7631737595497095, 3.6600818530475943});
  const Array numpy_u = array<double>({{-0.44143151367531125, -0.13626899477407572, 0.19512184309336467},
                                       {0.0005486875331721652, -0.9462214170309124, -0.31399006962808873},
                                       {-0.8913043920031215, 0.033047518568658424, 0.01106875751353116},
                                       {0.10351037857268375, -0.29155385871521045, 0.9290937439945999}});
  const Array numpy_vt = array<double>({{-0.14566110811602695, -0.955153505993991, -0.257807334204824},
                                        {-0.9410985062875953, 0.21414730045678848, -0.2616763939875489},
                                        {0.3051498698109963, 0.2045060236141143, -0.9300864708508964}});
  const auto [u, s, vt] = linalg::svd(a, false);
  CHECK(max_abs_diff(s, numpy_s) < 1e-14);
  CHECK(max_abs_diff(u, numpy_u) < 1e-14);
  CHECK(max_abs_diff(vt, numpy_vt) < 1e-14);
  CHECK(max_abs_diff(linalg::svdvals(a), numpy_s) < 1e-14);
  for (DType dt : {DType::f64, DType::f32}) {
    INFO(dtype_name(dt));
    const double tol = dt == DType::f64 ? 1e-13 : 1e-5;
    for (Shape shape : {Shape{2, 6, 4}, Shape{3, 5}, Shape{140, 130}, Shape{130, 140}}) {
      INFO(ir::shape_str(shape));
      const Array x = random::normal(random::key(10), shape, dt);
      for (bool full : {false, true}) {
        const auto [uu, ss, vv] = linalg::svd(x, full);
        const int64_t m = shape[shape.size() - 2], n = shape.back(), k = std::min(m, n);
        // u[..., :, :k] diag(s) vt[..., :k, :] = x; u and vt orthonormal.
        Shape lo(shape.size(), 0), u_hi = uu.shape(), v_hi = vv.shape();
        u_hi.back() = k;
        v_hi[v_hi.size() - 2] = k;
        const Array us = slice(uu, lo, u_hi) * expand_dims(ss, -2);
        CHECK(max_abs_diff(matmul(us, slice(vv, lo, v_hi)), x) < tol * 30);
        CHECK(max_abs_diff(matmul(mT(uu), uu),
                           broadcast_to(eye(uu.shape().back(), dt), batch_shape(uu, uu.shape().back()))) < tol * 30);
        const int64_t vt_rows = vv.shape()[vv.shape().size() - 2];
        CHECK(max_abs_diff(matmul(vv, mT(vv)), broadcast_to(eye(vt_rows, dt), batch_shape(vv, vt_rows))) < tol * 30);
      }
    }
  }
  CHECK_THROWS_AS(linalg::svd(zeros({3})), ShapeError);
}

TEST_CASE("linalg: svd's derivatives are JAX's, where JAX defines them", "[linalg]") {
  const Array tall = random::normal(random::key(41), {5, 3}, DType::f64);
  const Array wide = mT(random::normal(random::key(42), {5, 3}, DType::f64));
  const Array square = random::normal(random::key(43), {4, 4}, DType::f64);
  auto values = [](const Array& m) { return linalg::svdvals(m); };
  // Singular vectors up to sign: u_i vh_i (their outer products) are sign-free.
  auto rank_ones = [](const Array& m) {
    const auto [u, s, vt] = linalg::svd(m, false);
    return einsum("ik,kj->kij", {u, vt});
  };
  for (const Array& x : {tall, wide, square}) {
    INFO(ir::shape_str(x.shape()));
    CHECK_NOTHROW(testing::check_grads(values, std::make_tuple(x), 2));
    CHECK_NOTHROW(testing::check_grads(rank_ones, std::make_tuple(x), 1));
  }
  // ds_k / da = u_k v_k^T.
  const auto [u, s, vt] = linalg::svd(tall, false);
  for (int64_t k = 0; k < 3; ++k) {
    const Array g = grad([k](const Array& m) { return linalg::svdvals(m)[k]; })(tall);
    const Array uk = slice(u, {0, k}, {5, k + 1}), vk = slice(vt, {k, 0}, {k + 1, 3});
    CHECK(max_abs_diff(g, matmul(uk, vk)) < 1e-13);
  }
  CHECK_THROWS_WITH(jvp([](const Array& m) { return std::get<0>(linalg::svd(m, true)); }, std::make_tuple(tall),
                        std::make_tuple(tall)),
                    Catch::Contains("svd") && Catch::Contains("full_matrices"));
  // vmap equals a loop.
  const Array batch = random::normal(random::key(44), {3, 4, 3}, DType::f64);
  const Array ss = vmap(values)(batch);
  for (int64_t i = 0; i < 3; ++i) CHECK(max_abs_diff(ss[i], values(batch[i])) == 0);
}

TEST_CASE("linalg: pinv, lstsq and matrix_rank are NumPy's, and pinv's derivative JAX's", "[linalg]") {
  const Array a = array<double>({{1, 2, 0}, {3, -1, 2}, {0.5, 4, 1}, {2, 0, -3}});
  const Array b = array<double>({1, 0, 2, -1});
  // np.linalg.lstsq(a, b)[0], np.linalg.pinv(a)
  CHECK(max_abs_diff(linalg::lstsq(a, b),
                     array<double>({-0.04191725897576094, 0.4501549116092586, 0.2943320575906688})) < 1e-15);
  const Array numpy_pinv =
      array<double>({{0.06415163112812095, 0.21043678998845752, 0.020533381933053863, 0.14713565396998962},
                     {0.09367596136322216, -0.07150233886155158, 0.18528643460300107, 0.014093918959965973},
                     {-0.015673409877893132, 0.1455561630520624, 0.04422574570196218, -0.22155397606463764}});
  CHECK(max_abs_diff(linalg::pinv(a), numpy_pinv) < 1e-15);
  // Rank 2 of 3: the pseudo-inverse drops the zero singular value (NumPy's values), the rank counts 2.
  const Array r = array<double>({{1, 2, 3}, {2, 4, 6}, {1, 0, 1}});
  CHECK(max_abs_diff(linalg::pinv(r),
                     array<double>({{-0.03333333333333385, -0.06666666666666661, 0.8333333333333339},
                                    {0.0666666666666671, 0.13333333333333325, -0.666666666666667},
                                    {0.033333333333333236, 0.06666666666666664, 0.16666666666666682}})) < 1e-14);
  CHECK(linalg::matrix_rank(r).item<int32_t>() == 2);
  CHECK(linalg::matrix_rank(a).item<int32_t>() == 3);
  CHECK(linalg::matrix_rank(zeros({2, 3, 3}, DType::f64)).to_vector<int32_t>() == std::vector<int32_t>{0, 0});
  // lstsq of a batch of right-hand sides; the minimum-norm solution of a wide system.
  const Array bb = random::normal(random::key(51), {4, 2}, DType::f64);
  CHECK(max_abs_diff(linalg::lstsq(a, bb), matmul(linalg::pinv(a), bb)) < 1e-14);
  const Array wide = mT(a);
  const Array xw = linalg::lstsq(wide, array<double>({1, 2, 3}));
  CHECK(max_abs_diff(matmul(wide, xw), array<double>({1, 2, 3})) < 1e-14);
  CHECK(max_abs_diff(xw, matmul(linalg::pinv(wide), array<double>({1, 2, 3}))) < 1e-14);
  CHECK(linalg::pinv(zeros({2, 0, 3}, DType::f64)).shape() == Shape{2, 3, 0});
  // pinv's derivative: finite differences at full rank, and at an orthogonal matrix (all singular
  // values equal, where a derivative through the SVD would be NaN) the inverse's: -P A' P.
  auto pinv_of = [](const Array& m) { return linalg::pinv(m); };
  CHECK_NOTHROW(testing::check_grads(pinv_of, std::make_tuple(a), 2));
  const Array q = linalg::qr(random::normal(random::key(52), {3, 3}, DType::f64)).first;
  const Array dq = random::normal(random::key(53), {3, 3}, DType::f64);
  const Array dp = jvp(pinv_of, std::make_tuple(q), std::make_tuple(dq)).second;
  CHECK(max_abs_diff(dp, -matmul(matmul(mT(q), dq), mT(q))) < 1e-13);
  CHECK_THROWS_WITH(linalg::lstsq(a, zeros({3}, DType::f64)),
                    Catch::Contains("linalg::lstsq") && Catch::Contains("f64[3]"));
}

TEST_CASE("linalg: norm is NumPy's for vectors and matrices", "[linalg]") {
  const Array v = array<double>({3, -4, 0, 1});
  CHECK(linalg::norm(v).item<double>() == Approx(std::sqrt(26.0)).epsilon(1e-15));
  CHECK(linalg::norm(v, 1).item<double>() == 8);
  CHECK(linalg::norm(v, std::numeric_limits<double>::infinity()).item<double>() == 4);
  CHECK(linalg::norm(v, -std::numeric_limits<double>::infinity()).item<double>() == 0);
  CHECK(linalg::norm(v, 0).item<double>() == 3);
  CHECK(linalg::norm(v, 3).item<double>() == Approx(std::cbrt(27.0 + 64 + 1)).epsilon(1e-15));
  const Array m = array<double>({{1, -2, 3}, {-4, 5, -6}});
  // np.linalg.norm(m, ord) for each ord.
  CHECK(linalg::norm(m, "fro").item<double>() == Approx(std::sqrt(91.0)).epsilon(1e-15));
  CHECK(linalg::norm(m, 1).item<double>() == 9);
  CHECK(linalg::norm(m, -1).item<double>() == 5);
  CHECK(linalg::norm(m, std::numeric_limits<double>::infinity()).item<double>() == 15);
  CHECK(linalg::norm(m, -std::numeric_limits<double>::infinity()).item<double>() == 6);
  CHECK(linalg::norm(m, 2).item<double>() == Approx(9.508032000695724).epsilon(1e-14));
  CHECK(linalg::norm(m, -2).item<double>() == Approx(0.7728696356734843).epsilon(1e-14));
  CHECK(linalg::norm(m, "nuc").item<double>() == Approx(9.508032000695724 + 0.7728696356734843).epsilon(1e-14));
  // Axes and keepdims: row norms, and matrix norms of a batch over axes that are not last.
  CHECK(linalg::norm(m, 2, {1}).to_vector<double>() == std::vector<double>{std::sqrt(14.0), std::sqrt(77.0)});
  CHECK(linalg::norm(m, 1, {0}, true).shape() == Shape{1, 3});
  const Array batch = random::normal(random::key(71), {3, 2, 4}, DType::f64);
  const Array by_axes = linalg::norm(batch, 2, {1, 0});  // matrices [3, 2] per last index, rows on axis 1
  CHECK(by_axes.shape() == Shape{4});
  CHECK(linalg::norm(batch, "fro", {0, 1}, true).shape() == Shape{1, 1, 4});
  CHECK(linalg::norm(batch, -1, {2, 1}).shape() == Shape{3});
  // grad of the 2-norm of a vector is x / |x|.
  CHECK(max_abs_diff(grad([](const Array& x) { return linalg::norm(x, 2); })(v), v / std::sqrt(26.0)) < 1e-15);
  CHECK_THROWS_AS(linalg::norm(batch, 2), ShapeError);
  CHECK_THROWS_WITH(linalg::norm(m, "max"), Catch::Contains("linalg::norm"));
  CHECK_THROWS_WITH(linalg::norm(v, "fro", {0}), Catch::Contains("matrix norm"));
  CHECK_THROWS_WITH(linalg::norm(m, 3), Catch::Contains("linalg::norm"));
}

TEST_CASE("geqrf and householder_product: LAPACK's packed QR and its q, as JAX's", "[linalg]") {
  const Array a = array(std::vector<double>{1., 2., -1., 3., 4., 0.5, 5., 7., 2., -2., 1., 3.}, {4, 3});
  const auto [packed, taus] = linalg::geqrf(a);
  // jax._src.lax.linalg.geqrf and householder_product in f64.
  const Array jax_packed =
      array(std::vector<double>{-6.244997998398397, -7.526023228839097, -0.7205766921228923, 0.414078789347242,
                                -3.6549930723565485, -3.1674268179826885, 0.6901313155787367, 0.11475451420863907,
                                -1.9230643732057677, -0.2760525262314947, 0.9782275148395787, -0.21128344503126237},
            {4, 3});
  const Array jax_taus = array(std::vector<double>{1.1601281538050872, 1.0151780955559604, 1.914533878692432}, {3});
  const Array jax_q =
      array(std::vector<double>{-0.16012815380508716, -0.2174755954761102, 0.9382018999939896, -0.4803844614152615,
                                -0.10523012684327865, 0.09332114643557199, -0.8006407690254358, -0.2665829880029727,
                                -0.3009232689874336, 0.3202563076101743, -0.9330404580104047, -0.14322550281823226},
            {4, 3});
  CHECK(max_abs_diff(packed, jax_packed) < 1e-14);
  CHECK(max_abs_diff(taus, jax_taus) < 1e-14);
  const Array q = linalg::householder_product(packed, taus);
  CHECK(max_abs_diff(q, jax_q) < 1e-14);
  CHECK(max_abs_diff(q, linalg::qr(a).first) < 1e-14);  // orgqr of geqrf is qr's q
  CHECK(max_abs_diff(matmul(q, triu(packed[std::vector<Index>{Slice(0, 3)}])), a) < 1e-13);
  // Fewer reflectors than columns: the first two columns of H_0 alone.
  const Array jax_q1 =
      array(std::vector<double>{-0.16012815380508716, -0.4803844614152615, -0.4803844614152615, 0.8010829837959417,
                                -0.8006407690254358, -0.3315283603400973, 0.3202563076101743, 0.13261134413603892},
            {4, 2});
  const Array first_two = packed[std::vector<Index>{Slice(), Slice(0, 2)}];
  CHECK(max_abs_diff(linalg::householder_product(first_two, taus[std::vector<Index>{Slice(0, 1)}]), jax_q1) < 1e-14);
  // A wide matrix factors (taus: min(m, n)); its q needs m >= n, as JAX says.
  const auto [wide, wide_taus] = linalg::geqrf(mT(a));
  CHECK(wide_taus.shape() == Shape{3});
  CHECK(max_abs_diff(wide_taus, array(std::vector<double>{1.4082482904638631, 1.0857143307986774, 0.0}, {3})) < 1e-14);
  CHECK_THROWS_WITH(linalg::householder_product(wide, wide_taus), Catch::Contains("at least as many rows as columns"));
  // Batches (in parallel), f32, vmap and jit against single calls.
  const Array batch = random::normal(random::key(5), {6, 5, 3});
  const auto [bp, bt] = linalg::geqrf(batch);
  const Array bq = linalg::householder_product(bp, bt);
  for (int64_t i = 0; i < 6; ++i) {
    const auto [p1, t1] = linalg::geqrf(batch[i]);
    CHECK(max_abs_diff(bp[i], p1) == 0);
    CHECK(max_abs_diff(bq[i], linalg::householder_product(p1, t1)) == 0);
  }
  auto q_of = [](const Array& x) {
    const auto [p, t] = linalg::geqrf(x);
    return linalg::householder_product(p, t);
  };
  CHECK(max_abs_diff(vmap(q_of)(batch), bq) < 1e-15);
  CHECK(max_abs_diff(jit(q_of)(batch), bq) < 1e-15);
  const Array q32 = q_of(astype(a, DType::f32));
  CHECK(q32.dtype() == DType::f32);
  CHECK(max_abs_diff(q32, jax_q) < 1e-6);
  // No derivative, as in JAX.
  CHECK_THROWS_WITH(grad([&](const Array& x) { return sum(q_of(x)); })(a), Catch::Contains("JAX defines none"));
}
