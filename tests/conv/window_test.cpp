// The windowed reductions against JAX's values (strides, SAME/SAME_LOWER/
// VALID/explicit padding, base and window dilation, ties where the first
// extreme element takes the derivative) and their gradients; flax's
// max_pool and avg_pool; check_grads of every op to second order (window
// dilation too, which JAX's max-pool derivative refuses); vmap against a
// loop; jit against eager; errors.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "conv/jax_window_values.h"
#include "graft/graft.h"
#include "graft/testing.h"
#include "linalg/linalg_helpers.h"

using namespace graft;
using graft::test::max_abs_diff;

namespace {

std::vector<double> sines(int64_t n, double a, double b) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = std::sin(a * static_cast<double>(i) + b);
  return v;
}
int64_t count(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}
// sin(a i + b) over the flat index i, shaped.
Array fill(const Shape& shape, double a, double b) { return array<double>(sines(count(shape), a, b), shape); }
// floor(2 sin(0.37 i + 0.1)): few values, many ties.
Array ties(const Shape& shape) {
  std::vector<double> v = sines(count(shape), 0.37, 0.1);
  for (double& e : v) e = std::floor(2 * e);
  return array<double>(v, shape);
}

struct Case {
  std::string name;
  Shape shape;
  bool tied;
  std::function<Array(const Array&)> f;
};

std::vector<Case> cases() {
  using P = std::vector<std::pair<int64_t, int64_t>>;
  return {
      {"sum_same",
       {5, 7},
       false,
       [](const Array& x) {
         return reduce_window_sum(x, {2, 3}, {1, 2}, "SAME");
       }},
      {"max_base_dilated",
       {2, 6, 5},
       false,
       [](const Array& x) {
         return reduce_window_max(x, {1, 2, 2}, {1, 2, 1}, P{{0, 0}, {1, 1}, {0, 2}}, {1, 1, 2});
       }},
      {"min_same_lower",
       {4, 5},
       false,
       [](const Array& x) {
         return reduce_window_min(x, {3, 3}, {2, 2}, "SAME_LOWER");
       }},
      {"sum_dilated",
       {3, 4},
       false,
       [](const Array& x) {
         return reduce_window_sum(x, {2, 2}, {1, 1}, P{{1, 0}, {0, 1}}, {2, 1}, {1, 2});
       }},
      {"max_ties",
       {6, 6},
       true,
       [](const Array& x) {
         return reduce_window_max(x, {3, 3}, {1, 1}, "SAME");
       }},
      {"min_ties",
       {6, 6},
       true,
       [](const Array& x) {
         return reduce_window_min(x, {2, 2}, {2, 2}, "VALID");
       }},
      {"max_pool",
       {2, 5, 5, 3},
       false,
       [](const Array& x) {
         return nn::max_pool(x, {2, 2}, {2, 2}, "SAME");
       }},
      {"max_pool_unbatched",
       {5, 4, 2},
       true,
       [](const Array& x) {
         return nn::max_pool(x, {2, 3}, {1, 1}, P{{1, 0}, {1, 1}});
       }},
      {"avg_pool",
       {2, 5, 5, 3},
       false,
       [](const Array& x) {
         return nn::avg_pool(x, {3, 3}, {1, 1}, "SAME");
       }},
  };
}

const std::vector<double>& jax(const std::string& key) { return graft::test::jax_window_values().at(key); }

Array input(const Case& k) { return k.tied ? ties(k.shape) : fill(k.shape, 0.37, 0.1); }

}  // namespace

TEST_CASE("windowed reductions and pools: values and gradients are JAX's", "[conv][window]") {
  for (const Case& k : cases()) {
    INFO(k.name);
    const Array x = input(k);
    const Array out = k.f(x);
    const std::vector<double>& want = jax(k.name + "/out");
    REQUIRE(static_cast<size_t>(out.size()) == want.size());
    CHECK(max_abs_diff(out, array<double>(want, out.shape())) < 1e-13);
    const Array w = fill(out.shape(), 0.11, 0.3);
    const Array g = grad([&](const Array& v) { return sum(k.f(v) * w); })(x);
    CHECK(max_abs_diff(g, array<double>(jax(k.name + "/grad"), x.shape())) < 1e-13);
    // f32 rounds the same sums; jit's CPU backend runs the same kernels.
    CHECK(max_abs_diff(k.f(astype(x, DType::f32)), out) < 1e-5);
    CHECK(max_abs_diff(jit(k.f, JitOptions{.backend = Backend::cpu})(x), out) == 0);
    const Array jit_g =
        jit(grad([&](const Array& v) { return sum(k.f(v) * w); }), JitOptions{.backend = Backend::cpu})(x);
    CHECK(max_abs_diff(jit_g, g) == 0);
  }
}

TEST_CASE("windowed reductions: derivatives to second order against finite differences", "[conv][window]") {
  using P = std::vector<std::pair<int64_t, int64_t>>;
  const Array x = fill({4, 6}, 0.37, 0.1);  // distinct values: max and min are smooth near them
  const std::vector<std::function<Array(const Array&)>> fs{
      [](const Array& v) {
        return reduce_window_sum(v, {2, 3}, {2, 1}, P{{1, 0}, {-1, 2}}, {1, 2}, {1, 2});
      },
      [](const Array& v) {
        return reduce_window_max(v, {2, 2}, {1, 2}, "SAME", {2, 1}, {1, 2});
      },
      [](const Array& v) {
        return reduce_window_min(v, {3, 2}, {1, 1}, P{{1, 1}, {0, 0}}, {}, {2, 1});
      },
  };
  for (size_t i = 0; i < fs.size(); ++i) {
    INFO("function " << i);
    CHECK_NOTHROW(testing::check_grads(fs[i], std::make_tuple(x), 2));
  }
}

TEST_CASE("windowed reductions: vmap equals a loop, the mapped axis anywhere", "[conv][window]") {
  auto item = [](const Array& x, int64_t i) {
    Shape lo(x.shape().size(), 0), hi = x.shape();
    lo[0] = i, hi[0] = i + 1;
    return reshape(slice(x, lo, hi), Shape(x.shape().begin() + 1, x.shape().end()));
  };
  const Array xs = fill({3, 5, 6}, 0.37, 0.1), ws = fill({3, 3, 3}, 0.11, 0.3);
  auto pool = [](const Array& v) { return reduce_window_max(v, {2, 2}, {2, 2}, "SAME"); };
  // The gradient through max (select-and-scatter) batched with a batched cotangent.
  auto pool_grad = [&](const Array& v, const Array& w) {
    return grad([&](const Array& u) { return sum(pool(u) * w); })(v);
  };
  const Array mapped = vmap(pool)(xs);
  const Array grads = vmap(pool_grad)(xs, ws);
  const Array shared_w = vmap([&](const Array& v) { return pool_grad(v, item(ws, 0)); })(xs);
  const Array moved = vmap(pool, Axes{2})(transpose(xs, {1, 2, 0}));  // mapped along the last axis
  const Array sums = vmap([](const Array& v) { return reduce_window_sum(v, {3, 2}, {1, 2}, "VALID", {2, 1}); })(xs);
  for (int64_t i = 0; i < 3; ++i) {
    CHECK(max_abs_diff(item(mapped, i), pool(item(xs, i))) == 0);
    CHECK(max_abs_diff(item(moved, i), pool(item(xs, i))) == 0);
    CHECK(max_abs_diff(item(grads, i), pool_grad(item(xs, i), item(ws, i))) == 0);
    CHECK(max_abs_diff(item(shared_w, i), pool_grad(item(xs, i), item(ws, 0))) == 0);
    CHECK(max_abs_diff(item(sums, i), reduce_window_sum(item(xs, i), {3, 2}, {1, 2}, "VALID", {2, 1})) == 0);
  }
}

TEST_CASE("windowed reductions: integers, empty windows, and errors naming the shapes", "[conv][window]") {
  const Array xi = array<int32_t>({3, -1, 4, 1, -5, 9, 2, -6}, {2, 4});
  CHECK(reduce_window_max(xi, {1, 2}, {1, 2}, "VALID").dtype() == DType::i32);
  CHECK(max_abs_diff(astype(reduce_window_max(xi, {1, 2}, {1, 2}, "VALID"), DType::f64),
                     array<double>({3, 4, 9, 2}, {2, 2})) == 0);
  CHECK(max_abs_diff(astype(reduce_window_sum(xi, {2, 1}, {}, "VALID"), DType::f64),
                     array<double>({-2, 8, 6, -5}, {1, 4})) == 0);
  CHECK(max_abs_diff(nn::avg_pool(reshape(xi, {2, 4, 1}), {2}, {2}), array<float>({1, 2.5f, 2, -2}, {2, 2, 1})) < 1e-7);
  // A window lying wholly in the padding: the identity, and no derivative.
  const Array x = fill({3}, 0.37, 0.1);
  const Array padded = reduce_window_max(x, {2}, {4}, std::vector<std::pair<int64_t, int64_t>>{{0, 5}});
  CHECK(padded.shape() == Shape{2});
  CHECK(std::isinf(padded.to_vector<double>()[1]));
  CHECK(max_abs_diff(grad([](const Array& v) {
                       return sum(reduce_window_max(v, {2}, {4}, std::vector<std::pair<int64_t, int64_t>>{{0, 5}}));
                     })(x),
                     array<double>({0, 1, 0}, {3})) == 0);
  CHECK_THROWS_WITH(reduce_window_sum(x, {2, 2}, {}, "VALID"),
                    Catch::Contains("reduce_window_sum") && Catch::Contains("window_dimensions needs 1"));
  CHECK_THROWS_WITH(reduce_window_max(x, {0}, {}, "VALID"), Catch::Contains("window size must be at least 1"));
  CHECK_THROWS_AS(reduce_window_sum(array<bool>({true, false}, {2}), {1}, {}, "VALID"), DTypeError);
  CHECK_THROWS_WITH(nn::max_pool(fill({4, 4}, 0.1, 0), {2, 2}),
                    Catch::Contains("nn::max_pool") && Catch::Contains("f64[4,4]"));
}

TEST_CASE("windowed max and min over NHWC lanes: NaNs and signed zeros as the scalar rule", "[conv][window]") {
  // f32 lanes (the features of an NHWC pool, 7 of them: a vector body and a scalar tail) take a vectorised
  // path; f64 ones the scalar rule. Both must give the first NaN, max(-0, +0) = +0 and min = -0.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> v;
  const std::vector<float> specials = {nan, -0.0f, 0.0f, -0.0f, 1.5f, -2.0f, 0.0f, nan, -0.0f};
  for (int i = 0; i < 2 * 6 * 5 * 7; ++i)
    v.push_back(i % 5 == 0 ? specials[static_cast<size_t>(i / 5) % specials.size()]
                           : static_cast<float>((i * 37) % 11) - 5.0f);
  const Array x = array<float>(v, {2, 6, 5, 7});
  for (const bool is_max : {true, false}) {
    INFO((is_max ? "max" : "min"));
    auto pool = [&](const Array& a) {
      return is_max ? reduce_window_max(a, {1, 3, 2, 1}, {1, 2, 1, 1}, "SAME")
                    : reduce_window_min(a, {1, 3, 2, 1}, {1, 2, 1, 1}, "SAME");
    };
    const std::vector<float> got = pool(x).to_vector<float>();
    const std::vector<double> want = pool(astype(x, DType::f64)).to_vector<double>();
    REQUIRE(got.size() == want.size());
    int nans = 0, zeros = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      INFO("element " << i);
      CHECK(std::isnan(got[i]) == std::isnan(want[i]));
      if (std::isnan(want[i])) {
        ++nans;
        continue;
      }
      CHECK(static_cast<double>(got[i]) == want[i]);
      CHECK(std::signbit(got[i]) == std::signbit(want[i]));
      zeros += want[i] == 0;
    }
    CHECK(nans > 0);
    CHECK(zeros > 0);
  }
}
