// graft::linalg's eigh and eigvalsh: eigenvalues against NumPy's, the
// decomposition reconstructs a with orthonormal eigenvectors (Eigen's path
// and LAPACK's syevd from 128 rows, f64 and f32), the primitive reads the
// triangle it is told to, derivatives against finite differences and the
// closed form dw_k/da = v_k v_k^T, repeated eigenvalues as JAX (w' finite,
// v' not), vmap against a loop and jit against eager.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "api/dispatch.h"
#include "graft/graft.h"
#include "graft/testing.h"

using namespace graft;

namespace {

double max_abs_diff(const Array& a, const Array& b) {
  const std::vector<double> x = astype(a, DType::f64).to_vector<double>(),
                            y = astype(b, DType::f64).to_vector<double>();
  REQUIRE(x.size() == y.size());
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::fabs(x[i] - y[i]));
  return worst;
}

Array mT(const Array& a) {
  std::vector<int> perm;
  for (size_t i = 0; i < a.shape().size(); ++i) perm.push_back(static_cast<int>(i));
  std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
  return transpose(a, perm);
}

Array symmetric(uint64_t seed, Shape batch, int64_t n, DType dt = DType::f64) {
  Shape s = batch;
  s.push_back(n);
  s.push_back(n);
  const Array x = random::normal(random::key(seed), s, dt);
  return (x + mT(x)) * 0.5;
}

// v diag(w) v^T, and how far v^T v is from the identity.
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
