// top_k, argsort(descending), searchsorted and cumlogsumexp against JAX's
// values (computed with JAX 0.10.2, quoted below), against a full sort, a
// brute-force count and a direct sum, and under grad, vmap and jit.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "graft/graft.h"
#include "graft/testing.h"

using namespace graft;

namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

bool same(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i])))) return false;
  return true;
}

}  // namespace

TEST_CASE("top_k: lax.top_k's values and indices, NaN largest, ties in order", "[api][sort]") {
  // jax.lax.top_k(jnp.array([1., nan, 3., 3., -inf, 2.]), 4)
  const Array x = array(std::vector<float>{1, kNan, 3, 3, -kInf, 2}, {6});
  auto [v, i] = top_k(x, 4);
  CHECK(same(v.to_vector<float>(), {kNan, 3, 3, 2}));
  CHECK(i.dtype() == DType::i32);
  CHECK(i.to_vector<int32_t>() == std::vector<int32_t>{1, 2, 3, 5});
  auto [vi, ii] = top_k(array({1, 5, 2}), 2);
  CHECK(vi.to_vector<int32_t>() == std::vector<int32_t>{5, 2});
  CHECK(ii.to_vector<int32_t>() == std::vector<int32_t>{1, 2});
  auto [v0, i0] = top_k(array({{1.0f, 2.0f}}), 0);
  CHECK(v0.shape() == Shape{1, 0});
  CHECK(i0.shape() == Shape{1, 0});
  CHECK_THROWS_AS(top_k(x, 7), ShapeError);
  CHECK_THROWS_WITH(top_k(x, 7), Catch::Contains("top_k") && Catch::Contains("k = 7"));
  CHECK_THROWS_AS(top_k(scalar(1.0f), 1), ShapeError);
  CHECK_THROWS_AS(top_k(astype(array({1, 0}), DType::bool_), 1), DTypeError);
}

// +0 ranks above -0 (as max orders them: top_k(x, 1) is max(x)); every NaN,
// whatever its sign, above every number (JAX's total order puts -NaN last).
TEST_CASE("top_k: +0 above -0, NaN of either sign largest", "[api][sort]") {
  const Array x = array(std::vector<float>{1, 0, -0.0f, kNan, -kNan, -1, 0, -0.0f}, {8});
  for (Backend b : {Backend::interpreter, Backend::cpu}) {
    auto [v, i] = jit([](const Array& a) { return top_k(a, 8); }, JitOptions{.backend = b})(x);
    CHECK(i.to_vector<int32_t>() == std::vector<int32_t>{3, 4, 0, 1, 6, 2, 7, 5});
  }
  const Array z = array(std::vector<double>{-0.0, 0.0, -0.0}, {3});
  auto [v, i] = top_k(z, 1);
  CHECK(i.to_vector<int32_t>() == std::vector<int32_t>{1});
  CHECK(!std::signbit(v.to_vector<double>()[0]));
  CHECK(!std::signbit(max(z).item<double>()));
}

TEST_CASE("top_k: the first k of a descending sort, row by row, under jit and vmap", "[api][sort]") {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> d(-20, 20);  // ties are frequent
  std::vector<double> data(4 * 50);
  for (double& z : data) z = d(rng) * 0.5;
  const Array x = array(data, {4, 50});
  auto [v, i] = top_k(x, 7);
  const std::vector<double> vs = v.to_vector<double>();
  const std::vector<int32_t> is = i.to_vector<int32_t>();
  for (int r = 0; r < 4; ++r) {
    std::vector<int> order(50);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return data[r * 50 + a] > data[r * 50 + b]; });
    for (int k = 0; k < 7; ++k) {
      CHECK(is[r * 7 + k] == order[k]);
      CHECK(vs[r * 7 + k] == data[r * 50 + order[k]]);
    }
  }
  auto first = [](const Array& a) { return top_k(a, 7).first; };
  for (Backend b : {Backend::interpreter, Backend::cpu})
    CHECK(jit(first, JitOptions{.backend = b, .wait_for_compile = true})(x).to_vector<double>() == vs);
  const Array batched = vmap(first)(x);
  CHECK(batched.to_vector<double>() == vs);
  // vmap along the last axis: the batch axis moves out of top_k's way
  CHECK(vmap(first, Axes{1})(transpose(x)).to_vector<double>() == vs);
}

TEST_CASE("top_k: the gradient flows to the selected entries", "[api][sort][grad]") {
  // jax.grad(lambda v: lax.top_k(v, 2)[0].sum())(jnp.array([1., 3., 2., 3.])) == [0, 1, 0, 1]
  const Array g = grad([](const Array& a) { return sum(top_k(a, 2).first); })(array({1.0, 3.0, 2.0, 3.0}));
  CHECK(g.to_vector<double>() == std::vector<double>{0, 1, 0, 1});
  const Array x = array(std::vector<double>{0.3, -1.2, 2.5, 0.9, 1.7, -0.4}, {2, 3});
  CHECK_NOTHROW(
      testing::check_grads([](const Array& a) { return top_k(a, 2).first * a[0][0]; }, std::make_tuple(x), 2));
}

TEST_CASE("argsort: descending keeps ties in order and puts NaN first, as jnp.argsort", "[api][sort]") {
  const Array x = array(std::vector<float>{1, kNan, 3, 3, -kInf, 2}, {6});
  // jnp.argsort(x, descending=True), jnp.argsort(x)
  CHECK(argsort(x, -1, true).to_vector<int32_t>() == std::vector<int32_t>{1, 2, 3, 5, 0, 4});
  CHECK(argsort(x).to_vector<int32_t>() == std::vector<int32_t>{4, 0, 5, 2, 3, 1});
  const Array m = array({{3, 1, 3}, {0, 2, 2}});
  CHECK(argsort(m, 1, true).to_vector<int32_t>() == std::vector<int32_t>{0, 2, 1, 1, 2, 0});
  CHECK(argsort(m, 0, true).to_vector<int32_t>() == std::vector<int32_t>{0, 1, 0, 1, 0, 1});
}

TEST_CASE("searchsorted: NumPy's insertion points, NaN last, against a count", "[api][sort]") {
  const Array a = array(std::vector<float>{1, 2, 2, 3, kNan}, {5});
  const Array v = array(std::vector<float>{0, 2, 2.5f, 3, 5, kNan, -kInf, kInf}, {8});
  // jnp.searchsorted(a, v, side=...)
  CHECK(searchsorted(a, v).to_vector<int32_t>() == std::vector<int32_t>{0, 1, 3, 3, 4, 4, 0, 4});
  CHECK(searchsorted(a, v, "right").to_vector<int32_t>() == std::vector<int32_t>{0, 3, 3, 4, 4, 5, 0, 4});
  std::mt19937 rng(3);
  for (int n : {0, 1, 2, 3, 7, 64, 1000}) {
    std::uniform_int_distribution<int> d(0, 40);
    std::vector<int32_t> s(static_cast<size_t>(n)), q(300);
    for (int32_t& z : s) z = d(rng);
    for (int32_t& z : q) z = d(rng) - 1;
    std::sort(s.begin(), s.end());
    const Array got_l = searchsorted(array(s, {n}), array(q, {3, 100}));
    const Array got_r =
        jit([&s, n](const Array& qq) { return searchsorted(array(s, {n}), qq, "right"); })(array(q, {3, 100}));
    CHECK(got_l.shape() == Shape{3, 100});
    const std::vector<int32_t> l = got_l.to_vector<int32_t>(), r = got_r.to_vector<int32_t>();
    for (size_t k = 0; k < q.size(); ++k) {
      INFO("n " << n << " v " << q[k]);
      CHECK(l[k] == std::lower_bound(s.begin(), s.end(), q[k]) - s.begin());
      CHECK(r[k] == std::upper_bound(s.begin(), s.end(), q[k]) - s.begin());
    }
  }
  CHECK_THROWS_WITH(searchsorted(a, v, "middle"), Catch::Contains("searchsorted: side must be"));
  CHECK_THROWS_AS(searchsorted(array({{1.0, 2.0}}), v), ShapeError);
}

TEST_CASE("cumlogsumexp: lax.cumlogsumexp's values, no underflow, its gradient", "[api][reduce]") {
  // lax.cumlogsumexp(jnp.array([-1000., 0., -inf, 1.]))
  const std::vector<double> got =
      cumlogsumexp(array(std::vector<double>{-1000.0, 0.0, -INFINITY, 1.0}, {4}), 0).to_vector<double>();
  CHECK(got[0] == -1000.0);
  CHECK(got[1] == 0.0);
  CHECK(got[2] == 0.0);
  CHECK(got[3] == Approx(1.3132616875182228).epsilon(1e-15));
  // lax.cumlogsumexp(jnp.array([[1., 2.], [3., 4.]]), axis=1, reverse=True)
  const std::vector<float> r = cumlogsumexp(array({{1.0f, 2.0f}, {3.0f, 4.0f}}), 1, true).to_vector<float>();
  CHECK(r[0] == Approx(2.3132617f));
  CHECK(r[1] == 2.0f);
  CHECK(r[2] == Approx(4.3132615f));
  CHECK(r[3] == 4.0f);
  // against a direct log-sum-exp of each prefix
  const Array x = array(std::vector<double>{0.3, -1.2, 2.5, 0.9, 1.7, -0.4}, {2, 3});
  const std::vector<double> c = cumlogsumexp(x, 1).to_vector<double>(), xs = x.to_vector<double>();
  for (int row = 0; row < 2; ++row)
    for (int j = 0; j < 3; ++j) {
      double s = 0;
      for (int k = 0; k <= j; ++k) s += std::exp(xs[row * 3 + k]);
      CHECK(c[row * 3 + j] == Approx(std::log(s)).epsilon(1e-14));
    }
  CHECK_NOTHROW(testing::check_grads([](const Array& a) { return cumlogsumexp(a, 0); }, std::make_tuple(x), 2));
  CHECK(vmap([](const Array& row) { return cumlogsumexp(row, 0); })(x).to_vector<double>() == c);
  CHECK_THROWS_AS(cumlogsumexp(array({1, 2}), 0), DTypeError);
}

TEST_CASE("top_k: the CUDA kernel ranks as the interpreter selects", "[cuda_devices][sort]") {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> d(-6, 6);  // many ties
  std::vector<float> data(5 * 33);
  for (float& z : data) z = d(rng) == 6 ? kNan : static_cast<float>(d(rng));
  const Array x = array(data, {5, 33});
  for (int64_t k : {0, 1, 7, 33}) {
    INFO("k " << k);
    auto f = [k](const Array& a) {
      auto [v, i] = top_k(a, k);
      return std::make_pair(v, i);
    };
    const auto gpu = jit(f, JitOptions{.backend = Backend::cuda})(x);
    const auto host = jit(f, JitOptions{.backend = Backend::interpreter})(x);
    CHECK(same(gpu.first.to_vector<float>(), host.first.to_vector<float>()));
    CHECK(gpu.second.to_vector<int32_t>() == host.second.to_vector<int32_t>());
  }
}
