// Eager operations against values computed independently in the test.
#include <catch2/catch.hpp>
#include <tuple>
#include <cmath>

#include "api/dispatch.h"
#include "graft/graft.h"
#include "ir/op.h"

using namespace graft;
using Catch::Matchers::Contains;

namespace {

template <class T>
void check_close(const std::vector<T>& got, const std::vector<double>& want, double tol) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    if (std::isnan(want[i])) CHECK(std::isnan(static_cast<double>(got[i])));
    else CHECK(static_cast<double>(got[i]) == Approx(want[i]).epsilon(tol).margin(tol));
  }
}

}  // namespace

TEST_CASE("eager: creation functions", "[api][creation]") {
  Array a = array({1.5f, 2.0f, -3.0f});
  CHECK(a.shape() == Shape{3});
  CHECK(a.dtype() == f32);
  CHECK(a.to_vector<float>() == std::vector<float>{1.5f, 2.0f, -3.0f});
  Array b = array<int>({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(b.dtype() == i32);
  CHECK(b.shape() == Shape{2, 3});
  CHECK(zeros({2, 2}).to_vector<float>() == std::vector<float>(4, 0.0f));
  CHECK(ones({3}, f64).to_vector<double>() == std::vector<double>(3, 1.0));
  CHECK(full({2}, 7.5, f64).to_vector<double>() == std::vector<double>{7.5, 7.5});
  CHECK(arange(5).to_vector<int32_t>() == std::vector<int32_t>{0, 1, 2, 3, 4});
  CHECK(arange(3, i64).dtype() == i64);
  check_close(linspace(0, 1, 5).to_vector<float>(), {0, 0.25, 0.5, 0.75, 1}, 1e-7);
  CHECK(eye(3).to_vector<float>() == std::vector<float>{1, 0, 0, 0, 1, 0, 0, 0, 1});
  CHECK(scalar(2.5, f64).item<double>() == 2.5);
  CHECK(scalar(3).ndim() == 0);
  CHECK(a.device().kind() == "cpu");
  CHECK(a.device().id() == 0);
  CHECK(a.nbytes() == 12);
  CHECK(b.size() == 6);
  CHECK_FALSE(a.is_traced());
  CHECK_FALSE(a.is_deleted());
  CHECK(a.unsafe_buffer_pointer() != nullptr);
  CHECK_THROWS_AS(array<float>({1, 2, 3}, {2, 2}), ShapeError);
}

TEST_CASE("eager: unary math matches <cmath> in f32 and f64", "[api][elementwise]") {
  std::vector<double> xs = {-2.5, -1.0, -0.5, 0.0, 0.25, 0.5, 1.5, 3.0};
  struct Case {
    Array (*fn)(ArrayAt);  // unary ops are single functions, so they can be taken by address
    double (*ref)(double);
    bool positive_only, unit_only;
  };
  std::vector<Case> cases = {
      {graft::exp, [](double x) { return std::exp(x); }, false, false},
      {graft::log, [](double x) { return std::log(x); }, true, false},
      {graft::log1p, [](double x) { return std::log1p(x); }, true, false},
      {graft::expm1, [](double x) { return std::expm1(x); }, false, false},
      {graft::sqrt, [](double x) { return std::sqrt(x); }, true, false},
      {graft::rsqrt, [](double x) { return 1 / std::sqrt(x); }, true, false},
      {graft::sin, [](double x) { return std::sin(x); }, false, false},
      {graft::cos, [](double x) { return std::cos(x); }, false, false},
      {graft::tan, [](double x) { return std::tan(x); }, false, false},
      {graft::asin, [](double x) { return std::asin(x); }, false, true},
      {graft::acos, [](double x) { return std::acos(x); }, false, true},
      {graft::atan, [](double x) { return std::atan(x); }, false, false},
      {graft::sinh, [](double x) { return std::sinh(x); }, false, false},
      {graft::cosh, [](double x) { return std::cosh(x); }, false, false},
      {graft::tanh, [](double x) { return std::tanh(x); }, false, false},
      {graft::logistic, [](double x) { return 1 / (1 + std::exp(-x)); }, false, false},
      {graft::erf, [](double x) { return std::erf(x); }, false, false},
      {graft::abs, [](double x) { return std::fabs(x); }, false, false},
      {graft::neg, [](double x) { return -x; }, false, false},
      {graft::sign, [](double x) { return double((x > 0) - (x < 0)); }, false, false},
      {graft::floor, [](double x) { return std::floor(x); }, false, false},
      {graft::ceil, [](double x) { return std::ceil(x); }, false, false},
      {graft::round, [](double x) { return std::nearbyint(x); }, false, false},
      {graft::square, [](double x) { return x * x; }, false, false},
      {graft::reciprocal, [](double x) { return 1 / x; }, true, false},
  };
  for (size_t k = 0; k < cases.size(); ++k) {
    std::vector<double> in;
    for (double x : xs)
      if ((!cases[k].positive_only || x > 0) && (!cases[k].unit_only || std::fabs(x) <= 1)) in.push_back(x);
    std::vector<double> want;
    for (double x : in) want.push_back(cases[k].ref(x));
    INFO("case " << k);
    Shape shape{static_cast<int64_t>(in.size())};
    check_close(cases[k].fn(array(in, shape)).to_vector<double>(), want, 1e-12);
    std::vector<float> inf(in.begin(), in.end());
    Array r32 = cases[k].fn(array(inf, shape));
    CHECK(r32.dtype() == f32);
    check_close(r32.to_vector<float>(), want, 2e-6);
  }
  // round is half-to-even, as NumPy's.
  CHECK(graft::round(array({0.5, 1.5, 2.5, -0.5})).to_vector<double>() == std::vector<double>{0, 2, 2, -0.0});
}

TEST_CASE("eager: cbrt is the real cube root, within an ulp, on every backend", "[api][elementwise]") {
  // Negative inputs have negative roots (pow(x, 1/3) would be NaN); signed
  // zeros, infinities and NaN pass through. The C library's cbrt (glibc's is
  // not correctly rounded: cbrt(27.0) is 3.0000000000000004) within an ulp.
  const std::vector<double> xs = {-27.0, -8.0,  -1e-300, -0.0,   0.0,      1e-310,    0.001, 2.0,
                                  3.0,   1e300, 8.0,     1000.0, INFINITY, -INFINITY, NAN};
  for (DType dt : {DType::f32, DType::f64}) {
    const Array x = astype(array(xs, {static_cast<int64_t>(xs.size())}), dt);
    const std::vector<double> got = astype(cbrt(x), DType::f64).to_vector<double>();
    const std::vector<double> in = astype(x, DType::f64).to_vector<double>();
    for (size_t k = 0; k < xs.size(); ++k) {
      INFO(dtype_name(dt) << " cbrt(" << in[k] << ") = " << got[k]);
      const long double want = std::cbrt(static_cast<long double>(in[k]));
      if (std::isnan(in[k])) {
        CHECK(std::isnan(got[k]));
        continue;
      }
      CHECK(std::signbit(got[k]) == std::signbit(in[k]));
      // Within an ulp of the correctly rounded root.
      const double rounded =
          dt == DType::f32 ? static_cast<double>(static_cast<float>(want)) : static_cast<double>(want);
      int e = 0;
      std::frexp(rounded, &e);
      const double ulp = std::ldexp(1.0, e - (dt == DType::f32 ? 24 : 53));
      if (std::isinf(in[k]))
        CHECK(got[k] == in[k]);
      else
        CHECK(std::abs(got[k] - rounded) <= ulp);
    }
    // Compiled C++ computes the interpreter's bits (one scalar definition, scalar_ops.h).
    const Array compiled = jit([](const Array& a) { return cbrt(a) * 2.0f; },
                               JitOptions{.backend = Backend::cpu, .wait_for_compile = true})(x);
    const Array interpreted =
        jit([](const Array& a) { return cbrt(a) * 2.0f; }, JitOptions{.backend = Backend::interpreter})(x);
    const std::vector<double> c = astype(compiled, DType::f64).to_vector<double>(),
                              r = astype(interpreted, DType::f64).to_vector<double>();
    for (size_t k = 0; k < c.size(); ++k) CHECK((c[k] == r[k] || (std::isnan(c[k]) && std::isnan(r[k]))));
  }
  // Integers compute in the default float dtype; the derivative is 1 / (3 y^2).
  CHECK(cbrt(array({-8, 27})).dtype() == DType::f32);
  CHECK(grad([](const Array& a) { return cbrt(a); })(scalar(8.0)).item<double>() == Approx(1.0 / 12.0));
  const Array batch = array({-8.0, 1.0, 27.0});
  const std::vector<double> slopes = vmap(grad([](const Array& a) { return cbrt(a); }))(batch).to_vector<double>();
  CHECK(slopes[0] == Approx(1.0 / 12.0));
  CHECK(slopes[1] == Approx(1.0 / 3.0));
  CHECK(slopes[2] == Approx(1.0 / 27.0));
}

TEST_CASE("eager: binary ops broadcast like NumPy", "[api][elementwise][broadcast]") {
  Array a = array<float>({1, 2, 3}, {3, 1});
  Array b = array<float>({10, 20, 30, 40}, {4});
  Array c = a + b;
  CHECK(c.shape() == Shape{3, 4});
  std::vector<float> want;
  for (float x : {1.f, 2.f, 3.f})
    for (float y : {10.f, 20.f, 30.f, 40.f}) want.push_back(x + y);
  CHECK(c.to_vector<float>() == want);
  CHECK((b - a).to_vector<float>()[0] == 9.0f);
  CHECK((a * b).shape() == Shape{3, 4});
  check_close((b / a).to_vector<float>(), {10, 20, 30, 40, 5, 10, 15, 20, 10.0 / 3, 20.0 / 3, 10, 40.0 / 3}, 1e-6);
  // size-1 and 0-d operands
  CHECK((array({2.0f}) * scalar(3)).to_vector<float>() == std::vector<float>{6});
  CHECK((scalar(2.0, f64) + scalar(1.0, f64)).shape() == Shape{});
  CHECK(maximum(array({1.0f, 5.0f}), array({3.0f})).to_vector<float>() == std::vector<float>{3, 5});
  CHECK(minimum(array({1.0f, 5.0f}), array({3.0f})).to_vector<float>() == std::vector<float>{1, 3});
  check_close(graft::pow(array({2.0, 3.0}), array({3.0, 0.5})).to_vector<double>(), {8, std::sqrt(3.0)}, 1e-12);
  check_close(graft::atan2(array({1.0, -1.0}), array({1.0, 1.0})).to_vector<double>(), {M_PI / 4, -M_PI / 4}, 1e-12);
  CHECK((array({1, 2, 3}) < array({2, 2, 2})).to_vector<bool>() == std::vector<bool>{true, false, false});
  CHECK((array({1, 2, 3}) == 2).to_vector<bool>() == std::vector<bool>{false, true, false});
  CHECK(where(array({1, 0, 1}) > 0, array({1.0f, 2.0f, 3.0f}), scalar(-1)).to_vector<float>() ==
        std::vector<float>{1, -1, 3});
  CHECK(clip(array({-2.0f, 0.5f, 9.0f}), 0, 1).to_vector<float>() == std::vector<float>{0, 0.5f, 1});
  CHECK(logical_and(array({1, 0, 1}), array({1, 1, 0})).to_vector<bool>() == std::vector<bool>{true, false, false});
  CHECK(logical_or(array({1, 0, 0}), array({0, 0, 1})).to_vector<bool>() == std::vector<bool>{true, false, true});
  CHECK(logical_not(array({1, 0})).to_vector<bool>() == std::vector<bool>{false, true});
  CHECK(isfinite(array<double>({1.0, INFINITY, NAN})).to_vector<bool>() == std::vector<bool>{true, false, false});
}

TEST_CASE("eager: promotion and weak scalars", "[api][promotion]") {
  Array xf = array({1.0f, 2.0f});
  Array xi = array({1, 2});
  Array xd = array({1.0, 2.0});
  CHECK((xf * 2.0).dtype() == f32);  // a C++ double does not widen f32
  CHECK((xf * 2).dtype() == f32);
  CHECK((xi * 2).dtype() == i32);
  CHECK((xi * 2.5).dtype() == f32);  // int array times a double: default float
  CHECK((xi * 2.5).to_vector<float>() == std::vector<float>{2.5f, 5.0f});
  CHECK((xi + xf).dtype() == f32);
  CHECK((xf + xd).dtype() == f64);
  CHECK((xi + array({1u, 2u})).dtype() == i64);
  CHECK((xi / 2).dtype() == f32);  // true division
  CHECK((xi / 2).to_vector<float>() == std::vector<float>{0.5f, 1.0f});
  CHECK((2.0 - xf).to_vector<float>() == std::vector<float>{1.0f, 0.0f});
  CHECK((1 / xd).to_vector<double>() == std::vector<double>{1.0, 0.5});
  CHECK(astype(xf, i32).dtype() == i32);
  CHECK(astype(array<float>({1.7f, -1.7f, NAN, 1e20f}), i32).to_vector<int32_t>() ==
        std::vector<int32_t>{1, -1, 0, 2147483647});
}

TEST_CASE("eager: integer division never traps", "[api][elementwise]") {
  Array a = array({7, -7, 5, -2147483647 - 1, 9});
  Array b = array({2, 2, 0, -1, -4});
  // `/` is true division (f32); the integer primitives follow XLA: x/0 = -1, x%0 = x, INT_MIN/-1 = INT_MIN.
  check_close((a / b).to_vector<float>(), {3.5, -3.5, INFINITY, 2147483648.0, -2.25}, 1e-6);
  auto int_op = [&](ir::Op op) { return detail::bind1(op, {a, b}, {}, std::source_location::current()).to_vector<int32_t>(); };
  CHECK(int_op(ir::Op::div) == std::vector<int32_t>{3, -3, -1, -2147483647 - 1, -2});
  CHECK(int_op(ir::Op::rem) == std::vector<int32_t>{1, -1, 5, 0, 1});
}

TEST_CASE("eager: reductions with axes, negative axes and keepdims", "[api][reduce]") {
  std::vector<double> v(24);
  for (int i = 0; i < 24; ++i) v[i] = (i * 7 % 11) - 5.0;
  Array x = array(v, {2, 3, 4});
  auto at = [&](int i, int j, int k) { return v[i * 12 + j * 4 + k]; };
  // sum over axis 1 (and -2), by loops
  std::vector<double> want;
  for (int i = 0; i < 2; ++i)
    for (int k = 0; k < 4; ++k) want.push_back(at(i, 0, k) + at(i, 1, k) + at(i, 2, k));
  CHECK(sum(x, {1}).to_vector<double>() == want);
  CHECK(sum(x, {-2}).to_vector<double>() == want);
  CHECK(sum(x, {1}, true).shape() == Shape{2, 1, 4});
  double total = 0, mx = -1e9, mn = 1e9;
  for (double e : v) total += e, mx = std::max(mx, e), mn = std::min(mn, e);
  CHECK(sum(x).item<double>() == total);
  CHECK(sum(x).ndim() == 0);
  CHECK(max(x).item<double>() == mx);
  CHECK(min(x).item<double>() == mn);
  CHECK(mean(x).item<double>() == Approx(total / 24));
  std::vector<double> maxes;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) maxes.push_back(std::max({at(i, j, 0), at(i, j, 1), at(i, j, 2), at(i, j, 3)}));
  CHECK(max(x, {-1}).to_vector<double>() == maxes);
  CHECK(prod(array({1.0f, 2.0f, 3.0f, 4.0f})).item<float>() == 24.0f);
  CHECK(sum(array({1, 2, 3})).dtype() == i32);
  CHECK(mean(array({1, 2})).item<float>() == 1.5f);
  CHECK(sum(zeros({0, 3}), {0}).to_vector<float>() == std::vector<float>(3, 0.0f));
  CHECK(max(array<double>({1.0, NAN, 3.0})).to_vector<double>()[0] != max(array<double>({1.0, NAN, 3.0})).to_vector<double>()[0]);
  CHECK_THROWS_AS(sum(x, {3}), ShapeError);
  CHECK_THROWS_AS(sum(x, {1, -2}), ShapeError);
  CHECK_THROWS_AS(max(zeros({0})), ShapeError);
}

TEST_CASE("eager: shape ops", "[api][shape]") {
  Array x = array<float>({0, 1, 2, 3, 4, 5}, {2, 3});
  CHECK(reshape(x, {3, -1}).shape() == Shape{3, 2});
  CHECK(reshape(x, {6}).to_vector<float>() == x.to_vector<float>());
  CHECK(transpose(x).to_vector<float>() == std::vector<float>{0, 3, 1, 4, 2, 5});
  CHECK(x.T().shape() == Shape{3, 2});
  CHECK(transpose(reshape(arange(24), {2, 3, 4}), {1, -1, 0}).shape() == Shape{3, 4, 2});
  CHECK(broadcast_to(array({1.0f, 2.0f}), {2, 2}).to_vector<float>() == std::vector<float>{1, 2, 1, 2});
  CHECK(expand_dims(x, -1).shape() == Shape{2, 3, 1});
  CHECK(x[1].to_vector<float>() == std::vector<float>{3, 4, 5});
  CHECK(x[-2].to_vector<float>() == std::vector<float>{0, 1, 2});
  CHECK(x[1][2].item<float>() == 5.0f);
  CHECK_THROWS_AS(reshape(x, {4, -1}), ShapeError);
  CHECK_THROWS_AS(reshape(x, {-1, -1}), ShapeError);
  CHECK_THROWS_AS(x[2], ShapeError);
  CHECK_THROWS_AS(broadcast_to(x, {3, 3}), ShapeError);
  CHECK_THROWS_AS(transpose(x, {0, 0}), ShapeError);
}

TEST_CASE("eager: matrix transposes in tiles equal the element-by-element definition", "[api][shape]") {
  // Batches of [R, C] with edges around the tile size (16 or 32) and large
  // enough to run in parallel, in every element size (1, 4 and 8 bytes).
  for (auto [b, r, c] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 7}, {1, 7, 1}, {1, 33, 31}, {3, 17, 65},
                         {2, 300, 129}, {1, 1024, 515}}) {
    INFO(b << " x " << r << " x " << c);
    Array x = reshape(arange(b * r * c, DType::i64), {b, r, c});
    for (DType d : {DType::bool_, DType::i32, DType::f32, DType::i64, DType::f64}) {
      std::vector<int64_t> got = astype(transpose(astype(x, d), {0, 2, 1}), DType::i64).to_vector<int64_t>();
      std::vector<int64_t> src = astype(astype(x, d), DType::i64).to_vector<int64_t>();
      REQUIRE(got.size() == src.size());
      bool same = true;
      for (int64_t k = 0; k < b && same; ++k)
        for (int64_t i = 0; i < c && same; ++i)
          for (int64_t j = 0; j < r && same; ++j) same = got[(k * c + i) * r + j] == src[(k * r + j) * c + i];
      CHECK(same);
    }
  }
  // Two-dimensional, and a permutation that is not a trailing swap (the strided path).
  Array m = reshape(arange(24), {4, 6});
  CHECK(transpose(m).to_vector<int32_t>()[1] == 6);
  CHECK(transpose(reshape(arange(24), {2, 3, 4}), {2, 1, 0}).to_vector<int32_t>()[1] == 12);
}

TEST_CASE("eager: matmul against naive loops", "[api][linalg]") {
  auto naive = [](const std::vector<double>& a, const std::vector<double>& b, int m, int k, int n) {
    std::vector<double> c(m * n, 0.0);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j)
        for (int p = 0; p < k; ++p) c[i * n + j] += a[i * k + p] * b[p * n + j];
    return c;
  };
  std::vector<double> a(12), b(20);
  for (int i = 0; i < 12; ++i) a[i] = std::sin(i + 1.0);
  for (int i = 0; i < 20; ++i) b[i] = std::cos(i * 0.5);
  Array A = array(a, {3, 4}), B = array(b, {4, 5});
  check_close(matmul(A, B).to_vector<double>(), naive(a, b, 3, 4, 5), 1e-12);
  check_close(matmul(astype(A, f32), astype(B, f32)).to_vector<float>(), naive(a, b, 3, 4, 5), 1e-5);
  // matrix @ vector, vector @ matrix
  std::vector<double> v(b.begin(), b.begin() + 4);
  CHECK(matmul(A, array(v, {4})).shape() == Shape{3});
  check_close(matmul(A, array(v, {4})).to_vector<double>(), naive(a, v, 3, 4, 1), 1e-12);
  CHECK(matmul(array(std::vector<double>(a.begin(), a.begin() + 3), {3}), A).shape() == Shape{4});
  // batched, with batch broadcasting: [2,3,4] @ [4,5] -> [2,3,5]
  std::vector<double> a2 = a;
  for (double x : a) a2.push_back(2 * x);
  Array C = matmul(array(a2, {2, 3, 4}), B);
  CHECK(C.shape() == Shape{2, 3, 5});
  std::vector<double> want = naive(a, b, 3, 4, 5);
  for (double x : naive(a, b, 3, 4, 5)) want.push_back(2 * x);
  check_close(C.to_vector<double>(), want, 1e-12);
  // dot_general with an explicit batch dimension
  Array D = dot_general(array(a2, {2, 3, 4}), array(a2, {2, 3, 4}), {{2}, {2}}, {{0}, {0}});
  CHECK(D.shape() == Shape{2, 3, 3});
  CHECK_THROWS_AS(matmul(A, A), ShapeError);
}

TEST_CASE("eager: errors name the op, the operands and the caller's line", "[api][errors]") {
  Array a = zeros({3}), b = zeros({4});
  int line = __LINE__ + 2;
  try {
    Array c = a + b;
    FAIL("no error");
  } catch (const ShapeError& e) {
    std::string m = e.what();
    CHECK_THAT(m, Contains("add"));
    CHECK_THAT(m, Contains("f32[3]"));
    CHECK_THAT(m, Contains("f32[4]"));
    CHECK_THAT(m, Contains("eager_ops_test.cpp:" + std::to_string(line)));
  }
  line = __LINE__ + 2;
  try {
    Array d = graft::neg(array({1u, 2u}));
    FAIL("no error");
  } catch (const DTypeError& e) {
    CHECK_THAT(e.what(), Contains("neg"));
    CHECK_THAT(e.what(), Contains("u32[2]"));
    CHECK_THAT(e.what(), Contains("eager_ops_test.cpp:" + std::to_string(line)));
  }
  CHECK_THROWS_AS(Array().shape(), Error);
}

TEST_CASE("eager: large matmuls (the BLAS path) against naive loops", "[api][linalg]") {
  const int m = 64, k = 48, n = 40, batch = 3;
  std::vector<double> a(batch * m * k), b(k * n);
  for (size_t i = 0; i < a.size(); ++i) a[i] = std::sin(0.37 * i);
  for (size_t i = 0; i < b.size(); ++i) b[i] = std::cos(0.11 * i);
  std::vector<double> want(batch * m * n, 0.0);
  for (int t = 0; t < batch; ++t)
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j)
        for (int p = 0; p < k; ++p) want[(t * m + i) * n + j] += a[(t * m + i) * k + p] * b[p * n + j];
  Array A = array(a, {batch, m, k}), B = array(b, {k, n});
  check_close(matmul(A, B).to_vector<double>(), want, 1e-12);
  check_close(matmul(astype(A, f32), astype(B, f32)).to_vector<float>(), want, 1e-4);
  // A transposed operand goes through the permuting path first.
  Array Bt = transpose(B);
  check_close(dot_general(A, Bt, {{2}, {1}}).to_vector<double>(), want, 1e-12);
  // A batch of small products runs its entries on separate threads, each one
  // GEMM: the same bits as each product alone (attention's shapes).
  const Array q = astype(array(std::vector<double>(a.begin(), a.end()), {batch, m, k}), f32);
  const Array kt = astype(reshape(tile(array(b, {k, n}), {batch, 1}), {batch, k, n}), f32) * 0.5f;
  const std::vector<float> batched = dot_general(q, kt, {{2}, {1}}, {{0}, {0}}).to_vector<float>();
  for (int t = 0; t < batch; ++t) {
    const Array qt = reshape(take(q, array(std::vector<int32_t>{t}, {1}), 0), {m, k});
    const Array kt_t = reshape(take(kt, array(std::vector<int32_t>{t}, {1}), 0), {k, n});
    const std::vector<float> alone = matmul(qt, kt_t).to_vector<float>();
    CHECK(std::equal(alone.begin(), alone.end(), batched.begin() + t * m * n));
  }
}

TEST_CASE("eager: reductions in f32 agree with f64", "[api][reduce]") {
  std::vector<double> v(60);
  for (int k = 0; k < 60; ++k) v[k] = std::sin(0.7 * k) * 3;
  Array x64 = array(v, {3, 4, 5});
  Array x32 = astype(x64, f32);
  for (std::vector<int> axes : {std::vector<int>{}, {0}, {-1}, {0, 2}, {1, -1}}) {
    INFO("axes " << axes.size());
    check_close(sum(x32, axes).to_vector<float>(), sum(x64, axes).to_vector<double>(), 1e-5);
    check_close(mean(x32, axes).to_vector<float>(), mean(x64, axes).to_vector<double>(), 1e-5);
    check_close(max(x32, axes).to_vector<float>(), max(x64, axes).to_vector<double>(), 1e-6);
    check_close(min(x32, axes, true).to_vector<float>(), min(x64, axes, true).to_vector<double>(), 1e-6);
    check_close(logsumexp(x32, axes).to_vector<float>(), logsumexp(x64, axes).to_vector<double>(), 1e-5);
  }
  check_close(prod(x32, {2}).to_vector<float>(), prod(x64, {2}).to_vector<double>(), 1e-4);
  CHECK(argmax(x32, 1).to_vector<int32_t>() == argmax(x64, 1).to_vector<int32_t>());
  check_close(cumsum(x32, -1).to_vector<float>(), cumsum(x64, -1).to_vector<double>(), 1e-5);
}

// matmul's leading axes, lowered as jnp.matmul's: an axis both operands have
// at one size is a batch axis; an axis only one has (or where the other's
// size is 1) is a free axis of that operand, never a broadcast copy of the
// other. Values against per-slice 2-d products; the graph against the
// lowering (no broadcast, one dot_general), its gradients too.
TEST_CASE("eager: matmul's broadcast axes are free axes, not copies", "[api][linalg]") {
  auto filled = [](Shape s, double seed) {
    int64_t n = 1;
    for (int64_t d : s) n *= d;
    std::vector<double> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[size_t(i)] = std::sin(double(i) * 0.37 + seed);
    return array(v, s);
  };
  // Slice `at` of x's leading axes (each taken mod its size, so size-1 axes broadcast).
  auto slice2d = [](const Array& x, std::vector<int64_t> at) {
    Array r = x;
    const size_t lead = x.ndim() - 2;
    for (size_t i = 0; i < lead; ++i) {
      const int64_t size = x.shape()[i];
      r = take(r, array(std::vector<int32_t>{int32_t(at[at.size() - lead + i] % size)}, {1}), 0);
      r = reshape(r, Shape(r.shape().begin() + 1, r.shape().end()));
    }
    return r;
  };
  struct Case {
    Shape a, b, out;
  };
  const std::vector<Case> cases = {
      {{2, 3, 4}, {4, 5}, {2, 3, 5}},          {{3, 4}, {2, 4, 5}, {2, 3, 5}},
      {{2, 1, 3, 4}, {6, 4, 5}, {2, 6, 3, 5}}, {{1, 3, 4}, {2, 1, 4, 5}, {2, 1, 3, 5}},
      {{2, 6, 3, 4}, {6, 4, 5}, {2, 6, 3, 5}}, {{6, 1, 3, 4}, {1, 2, 4, 5}, {6, 2, 3, 5}},
      {{0, 3, 4}, {4, 5}, {0, 3, 5}},          {{2, 3, 4}, {1, 4, 5}, {2, 3, 5}},
  };
  for (const Case& c : cases) {
    INFO(Array(zeros(c.a)).ndim() << "-d @ " << c.b.size() << "-d, case " << (&c - cases.data()));
    const Array a = filled(c.a, 1), b = filled(c.b, 2);
    const Array r = matmul(a, b);
    REQUIRE(r.shape() == c.out);
    const std::vector<double> got = r.to_vector<double>();
    int64_t slices = 1;
    for (size_t i = 0; i + 2 < c.out.size(); ++i) slices *= c.out[i];
    for (int64_t s = 0; s < slices; ++s) {
      std::vector<int64_t> at(c.out.size() - 2);
      for (int64_t rest = s, i = int64_t(at.size()) - 1; i >= 0; --i) {
        at[size_t(i)] = rest % c.out[size_t(i)];
        rest /= c.out[size_t(i)];
      }
      const std::vector<double> want = matmul(slice2d(a, at), slice2d(b, at)).to_vector<double>();
      for (size_t j = 0; j < want.size(); ++j)
        CHECK(got[size_t(s) * want.size() + j] == Approx(want[j]).epsilon(1e-12));
    }
  }
  // x[B,T,D] @ w[D,F]: one dot_general over B*T rows, w not broadcast, and
  // the weight gradient one product too (no sum over B products).
  const Array x = filled({4, 8, 16}, 3), w = filled({16, 32}, 4);
  const auto loss = [](const Array& x, const Array& w) { return sum(tanh(matmul(x, w))); };
  const Graph forward = make_graph([](const Array& x, const Array& w) { return matmul(x, w); })(x, w);
  const Graph backward = make_graph(grad<1>(loss))(x, w);
  for (const auto& [g, products] : {std::pair{&forward, 1}, std::pair{&backward, 2}}) {
    int dots = 0, broadcasts = 0;
    for (const ir::Node& n : g->ir().nodes()) {
      dots += n.op == ir::Op::dot_general;
      broadcasts += n.op == ir::Op::broadcast_in_dim && g->ir().type(n.inputs[0]).shape.size() == 2;
    }
    INFO(g->to_text());
    CHECK(broadcasts == 0);  // no matrix copied per batch
    CHECK(dots == products);
  }
}
