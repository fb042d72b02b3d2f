// graft::nn against closed forms computed here with <cmath>, at large |x| in
// f32 (no overflow), with derivatives checked by finite differences, and
// under vmap and jit.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <numbers>
#include <string>

#include "graft/graft.h"
#include "graft/testing.h"

using namespace graft;
using Catch::Matchers::Contains;

namespace {

const std::string kThisFile = std::string(__FILE__).substr(std::string(__FILE__).find_last_of('/') + 1);

// Points away from every kink (0 and 6), both signs.
const std::vector<double> kPoints = {-7.5, -3.0, -1.25, -0.4, 0.3, 0.9, 2.0, 5.5, 8.0};

void check_close(const Array& got, const Array& want, double tol = 1e-13) {
  REQUIRE(got.shape() == want.shape());
  std::vector<double> g = astype(got, f64).to_vector<double>(), w = astype(want, f64).to_vector<double>();
  for (size_t i = 0; i < w.size(); ++i) {
    INFO("element " << i);
    CHECK(g[i] == Approx(w[i]).epsilon(tol).margin(tol));
  }
}

void check_values(const Array& got, const std::vector<double>& xs, const std::function<double(double)>& ref,
                  double tol) {
  std::vector<double> g = astype(got, f64).to_vector<double>();
  REQUIRE(g.size() == xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    INFO("x = " << xs[i]);
    CHECK(g[i] == Approx(ref(xs[i])).epsilon(tol).margin(tol));
  }
}

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }
double gelu_tanh(double x) {
  return 0.5 * x * (1 + std::tanh(std::sqrt(2 / std::numbers::pi) * (x + 0.044715 * x * x * x)));
}
double gelu_erf(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }

struct Activation {
  const char* name;
  std::function<Array(const Array&)> fn;
  std::function<double(double)> ref;
};

std::vector<Activation> activations() {
  return {
      {"relu", [](const Array& x) { return nn::relu(x); }, [](double x) { return x > 0 ? x : 0; }},
      {"relu6", [](const Array& x) { return nn::relu6(x); }, [](double x) { return std::min(std::max(x, 0.0), 6.0); }},
      {"gelu", [](const Array& x) { return nn::gelu(x); }, gelu_tanh},
      {"gelu exact", [](const Array& x) { return nn::gelu(x, false); }, gelu_erf},
      {"silu", [](const Array& x) { return nn::silu(x); }, [](double x) { return x * sigmoid(x); }},
      {"softplus", [](const Array& x) { return nn::softplus(x); }, [](double x) { return std::log1p(std::exp(x)); }},
      {"log_sigmoid", [](const Array& x) { return nn::log_sigmoid(x); }, [](double x) { return std::log(sigmoid(x)); }},
      {"elu", [](const Array& x) { return nn::elu(x); }, [](double x) { return x > 0 ? x : std::expm1(x); }},
      {"elu alpha", [](const Array& x) { return nn::elu(x, 0.5); }, [](double x) { return x > 0 ? x : 0.5 * std::expm1(x); }},
      {"leaky_relu", [](const Array& x) { return nn::leaky_relu(x); }, [](double x) { return x >= 0 ? x : 0.01 * x; }},
      {"leaky_relu slope", [](const Array& x) { return nn::leaky_relu(x, 0.2); },
       [](double x) { return x >= 0 ? x : 0.2 * x; }},
  };
}

}  // namespace

TEST_CASE("nn: activations match their closed forms in f64 and f32", "[api][nn]") {
  for (const Activation& a : activations()) {
    INFO(a.name);
    Array x64 = array(kPoints, {static_cast<int64_t>(kPoints.size())});
    Array y64 = a.fn(x64);
    CHECK(y64.dtype() == f64);
    check_values(y64, kPoints, a.ref, 1e-12);
    Array y32 = a.fn(astype(x64, f32));
    CHECK(y32.dtype() == f32);
    check_values(y32, kPoints, a.ref, 2e-6);
  }
  // Values quoted from the definitions: gelu(1) exact is Phi(1) = 0.8413447461.
  CHECK(nn::gelu(scalar(1.0, f64), false).item<double>() == Approx(0.8413447460685429).epsilon(1e-14));
  CHECK(nn::gelu(scalar(1.0, f64)).item<double>() == Approx(0.8411919906082768).epsilon(1e-14));
  CHECK(nn::softplus(scalar(0.0, f64)).item<double>() == Approx(std::log(2.0)).epsilon(1e-15));
  // relu keeps integer dtypes; the float activations compute integers in f32.
  CHECK(nn::relu(array({-2, 0, 3})).to_vector<int32_t>() == std::vector<int32_t>{0, 0, 3});
  CHECK(nn::relu6(array({-2, 4, 9})).to_vector<int32_t>() == std::vector<int32_t>{0, 4, 6});
  CHECK(nn::silu(array({1, 2})).dtype() == f32);
  // NaN propagates through relu (NaN <= 0 is false).
  CHECK(std::isnan(nn::relu(scalar(NAN)).item<float>()));
}

TEST_CASE("nn: large |x| in f32 does not overflow", "[api][nn]") {
  Array x = array<float>({-100, -30, 30, 100});
  std::vector<float> sp = nn::softplus(x).to_vector<float>();
  // softplus(-100) = 3.7e-44 is below f32's normal range; graft's f32 exp gives a tiny
  // denormal there, so only "tiny and non-negative" is asserted.
  CHECK(sp[0] >= 0.0f);
  CHECK(sp[0] < 1e-37f);
  CHECK(sp[1] == Approx(9.357623e-14).epsilon(1e-5));
  CHECK(sp[2] == 30.0f);
  CHECK(sp[3] == 100.0f);
  std::vector<float> ls = nn::log_sigmoid(x).to_vector<float>();
  CHECK(ls[0] == -100.0f);
  CHECK(ls[1] == -30.0f);
  CHECK(ls[2] == Approx(-9.357623e-14).epsilon(1e-5));
  CHECK(ls[3] <= 0.0f);
  CHECK(ls[3] > -1e-37f);
  for (const Activation& a : activations()) {
    INFO(a.name);
    for (float v : a.fn(x).to_vector<float>()) CHECK(std::isfinite(v));
  }
  CHECK(nn::gelu(x).to_vector<float>() == std::vector<float>{0, 0, 30, 100});
  CHECK(nn::elu(x).to_vector<float>()[0] == -1.0f);
  // The derivatives are finite too: softplus' = sigmoid, elu' = 1 for large x.
  auto total = [](std::function<Array(const Array&)> f) { return [f](const Array& v) { return sum(f(v)); }; };
  std::vector<float> dsp = grad(total([](const Array& v) { return nn::softplus(v); }))(x).to_vector<float>();
  CHECK(dsp[0] >= 0.0f);
  CHECK(dsp[0] < 1e-37f);
  CHECK(dsp[1] == Approx(9.357623e-14).epsilon(1e-5));
  CHECK(dsp[2] == 1.0f);
  CHECK(dsp[3] == 1.0f);
  std::vector<float> delu = grad(total([](const Array& v) { return nn::elu(v); }))(x).to_vector<float>();
  // elu' = expm1' = expm1(x) + 1 (JAX's rule too), which is 0 in f32 once expm1(x) rounds to -1.
  CHECK(delu[0] >= 0.0f);
  CHECK(delu[1] >= 0.0f);
  CHECK(delu[1] < 1e-12f);
  CHECK(delu[2] == 1.0f);
  CHECK(delu[3] == 1.0f);
  std::vector<float> dls = grad(total([](const Array& v) { return nn::log_sigmoid(v); }))(x).to_vector<float>();
  CHECK(dls[0] == 1.0f);
  CHECK(dls[3] >= 0.0f);
  CHECK(dls[3] < 1e-37f);
}

TEST_CASE("nn: derivatives match finite differences away from kinks", "[api][nn][grad]") {
  Array x = array(kPoints, {static_cast<int64_t>(kPoints.size())});
  for (const Activation& a : activations()) {
    INFO(a.name);
    CHECK_NOTHROW(testing::check_grads(a.fn, std::make_tuple(x)));
  }
  // Closed-form derivatives at a few points: softplus' = sigmoid, relu'(0) = 0 as JAX.
  Array d = grad([](const Array& v) { return sum(nn::softplus(v)); })(array<double>({-2, 0, 3}));
  check_close(d, array<double>({sigmoid(-2), 0.5, sigmoid(3)}));
  CHECK(grad([](const Array& v) { return sum(nn::relu(v)); })(array<double>({-1, 0, 2})).to_vector<double>() ==
        std::vector<double>{0, 0, 1});
  Array m = array<double>({0.5, -1.0, 2.0, 0.25, 3.0, -0.75}, {2, 3});
  CHECK_NOTHROW(testing::check_grads([](const Array& v) { return nn::standardize(v); }, std::make_tuple(m)));
  CHECK_NOTHROW(testing::check_grads([](const Array& v) { return nn::standardize(v, {0, 1}, 0.1); }, std::make_tuple(m)));
}

TEST_CASE("nn: standardize has zero mean and unit variance over its axes", "[api][nn]") {
  Array m = array<double>({1, 2, 3, 4, 10, 20, 30, 40}, {2, 4});
  std::vector<double> rows = nn::standardize(m, {-1}, 0).to_vector<double>();
  // Row [1, 2, 3, 4]: mean 2.5, variance 1.25.
  for (int i = 0; i < 4; ++i) CHECK(rows[i] == Approx((i + 1 - 2.5) / std::sqrt(1.25)));
  for (int i = 0; i < 4; ++i) CHECK(rows[4 + i] == Approx(rows[i]));
  std::vector<double> eps = nn::standardize(m, {-1}, 1.0).to_vector<double>();
  CHECK(eps[0] == Approx(-1.5 / std::sqrt(2.25)));
  std::vector<double> cols = nn::standardize(m, {0}).to_vector<double>();
  CHECK(cols[0] == Approx(-1.0).epsilon(1e-5));
  CHECK(cols[4] == Approx(1.0).epsilon(1e-5));
  std::vector<double> all = nn::standardize(m, {}).to_vector<double>();
  double total = 0;
  for (double v : all) total += v;
  CHECK(total == Approx(0).margin(1e-12));
}

TEST_CASE("nn: vmap equals a loop and jit equals eager", "[api][nn][vmap][jit]") {
  Array m = array<double>({0.5, -1.0, 2.0, 0.25, 3.0, -0.75, 1.5, -2.5, 0.1, 4.0, -0.2, 0.6}, {3, 4});
  for (const Activation& a : activations()) {
    INFO(a.name);
    Array batched = vmap(a.fn)(m);
    for (int64_t i = 0; i < 3; ++i) check_close(batched[i], a.fn(m[i]));
    check_close(jit(a.fn)(m), a.fn(m));
  }
  auto standardize_rows = [](const Array& v) { return nn::standardize(v); };
  Array batched = vmap(standardize_rows)(m);
  for (int64_t i = 0; i < 3; ++i) check_close(batched[i], standardize_rows(m[i]));
  check_close(jit(standardize_rows)(m), standardize_rows(m));
}

TEST_CASE("nn: errors name the function and the caller's line", "[api][nn][errors]") {
  try {
    nn::relu(array({true, false}));
    FAIL("relu accepted bool");
  } catch (const DTypeError& e) {
    CHECK_THAT(e.what(), Contains("nn.relu") && Contains("bool[2]") && Contains(kThisFile));
  }
  try {
    nn::standardize(zeros({2, 3}), {2});
    FAIL("standardize accepted axis 2 of a rank-2 array");
  } catch (const ShapeError& e) {
    CHECK_THAT(e.what(), Contains("nn.standardize") && Contains("axis 2") && Contains(kThisFile));
  }
  CHECK_THROWS_AS(nn::standardize(zeros({2, 3}), {1, -1}), ShapeError);
  CHECK_THROWS_AS(nn::gelu(array({true})), DTypeError);
}
