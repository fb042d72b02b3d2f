// graft::random draws jax.random's numbers: keys, split, fold_in and bits
// exactly, uniform, normal, bernoulli and randint as JAX computes them
// (tests/random/jax_values.json, written by scripts/make_random_values.py
// with JAX); and erf_inv, which normal goes through, as XLA's. Eagerly,
// and under jit on the interpreter and the cpu backend with the key traced.
#include <bit>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "graft/graft.h"

using namespace graft;
using nlohmann::json;

namespace {

const json& values() {
  static const json j = [] {
    std::ifstream in(GRAFT_RANDOM_VALUES_FILE);
    REQUIRE(in.good());
    return json::parse(in);
  }();
  return j;
}

// A case's seed (a string: 64-bit seeds do not fit JSON's doubles).
uint64_t seed_of(const json& c) { return std::stoull(c["seed"].get<std::string>()); }

std::vector<uint32_t> u32s(const json& a) { return a.get<std::vector<uint32_t>>(); }
template <class T>
std::vector<T> floats(const json& hex) {
  using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  std::vector<T> out;
  for (const json& h : hex)
    out.push_back(std::bit_cast<T>(static_cast<U>(std::stoull(h.get<std::string>(), nullptr, 16))));
  return out;
}

// Distance in ulps between two finite floats of one sign convention (order-preserving map).
template <class T>
int64_t ulps(T a, T b) {
  using S = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  auto ordered = [](T x) {
    const S i = std::bit_cast<S>(x);
    return i < 0 ? static_cast<int64_t>(std::numeric_limits<S>::min()) - i : static_cast<int64_t>(i);
  };
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : INT64_MAX;
  if (a == b) return 0;
  const int64_t d = ordered(a) - ordered(b);
  return d < 0 ? -d : d;
}

// The largest distance, with the element where it occurs in the report.
template <class T>
int64_t max_ulps(const std::vector<T>& got, const std::vector<T>& want) {
  REQUIRE(got.size() == want.size());
  int64_t worst = 0;
  size_t at = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (const int64_t d = ulps(got[i], want[i]); d > worst) worst = d, at = i;
  if (worst > 0)
    UNSCOPED_INFO("worst at element " << at << ": " << std::hexfloat << got[at] << " vs JAX's " << want[at]
                                      << std::defaultfloat);
  return worst;
}

// Each way a user runs a random function of a key: eagerly, and under jit with the key an argument.
struct Mode {
  const char* name;
  std::function<Array(const std::function<Array(const Array&)>&, const Array&)> run;
};
std::vector<Mode> modes() {
  return {{"eager", [](const auto& f, const Array& k) { return f(k); }},
          {"jit interpreter",
           [](const auto& f, const Array& k) { return jit(f, JitOptions{.backend = Backend::interpreter})(k); }},
          {"jit cpu", [](const auto& f, const Array& k) {
             return jit(f, JitOptions{.backend = Backend::automatic, .wait_for_compile = true})(k);
           }}};
}

}  // namespace

TEST_CASE("random: key, split, fold_in and bits are jax.random's, bit for bit", "[random]") {
  for (const json& c : values()["keys"]) {
    INFO("seed " << seed_of(c));
    const Array k = random::key(seed_of(c));
    CHECK(k.to_vector<uint32_t>() == u32s(c["key"]));
    for (const Mode& m : modes()) {
      INFO(m.name);
      const std::vector<uint32_t> split3 = u32s(c["split3"]);
      for (int i = 0; i < 3; ++i) {
        const Array child = m.run([i](const Array& key) { return random::split(key, 3)[static_cast<size_t>(i)]; }, k);
        CHECK(child.to_vector<uint32_t>() == std::vector<uint32_t>(split3.begin() + 2 * i, split3.begin() + 2 * i + 2));
      }
      for (const auto& [data, want] : c["fold_in"].items()) {
        const auto d = static_cast<uint32_t>(std::stoul(data));
        INFO("fold_in " << d);
        CHECK(m.run([d](const Array& key) { return random::fold_in(key, d); }, k).to_vector<uint32_t>() == u32s(want));
      }
      CHECK(m.run(
                 [](const Array& key) {
                   return random::bits(key, {2, 3});
                 },
                 k)
                .to_vector<uint32_t>() == u32s(c["bits_2x3"]));
      CHECK(m.run([](const Array& key) { return random::bits(key, {7}); }, k).to_vector<uint32_t>() ==
            u32s(c["bits_7"]));
    }
  }
}

TEST_CASE("random: uniform, normal, bernoulli and randint draw JAX's numbers", "[random]") {
  for (const json& c : values()["keys"]) {
    INFO("seed " << seed_of(c));
    const Array k = random::key(seed_of(c));
    for (const Mode& m : modes()) {
      INFO(m.name);
      auto draw = [&](const std::function<Array(const Array&)>& f) { return m.run(f, k); };
      // Uniform values are exact: integer bits scaled by powers of two, one product and one sum.
      CHECK(max_ulps(draw([](const Array& key) { return random::uniform(key, {9}, 0, 1, f32); }).to_vector<float>(),
                     floats<float>(c["uniform_f32"])) == 0);
      CHECK(max_ulps(draw([](const Array& key) { return random::uniform(key, {9}, 0, 1, f64); }).to_vector<double>(),
                     floats<double>(c["uniform_f64"])) == 0);
      CHECK(max_ulps(draw([](const Array& key) { return random::uniform(key, {9}, -3, 5, f32); }).to_vector<float>(),
                     floats<float>(c["uniform_f32_m3_5"])) == 0);
      // Normal values go through erf_inv as XLA evaluates it: equal in f64 (XLA's f64 log is the C
      // library's); in f32 XLA's log is its own polynomial, and 0.45 % of a million draws differ by
      // 1 to 3 ulps (docs/API.md).
      CHECK(max_ulps(draw([](const Array& key) {
                       return random::normal(key, {3, 4}, f32);
                     }).to_vector<float>(),
                     floats<float>(c["normal_f32"])) <= 3);
      CHECK(max_ulps(draw([](const Array& key) {
                       return random::normal(key, {3, 4}, f64);
                     }).to_vector<double>(),
                     floats<double>(c["normal_f64"])) == 0);
      CHECK(draw([](const Array& key) { return random::bernoulli(key, 0.3, {10}); }).to_vector<bool>() ==
            c["bernoulli_0.3"].get<std::vector<bool>>());
      CHECK(draw([](const Array& key) { return random::randint(key, {10}, -5, 17); }).to_vector<int32_t>() ==
            c["randint_m5_17"].get<std::vector<int32_t>>());
      CHECK(draw([](const Array& key) {
              return random::randint(key, {6}, INT32_MIN, int64_t{1} << 31);
            }).to_vector<int32_t>() == c["randint_full"].get<std::vector<int32_t>>());
      CHECK(draw([](const Array& key) { return random::randint(key, {6}, 0, 1000003); }).to_vector<int32_t>() ==
            c["randint_0_1000003"].get<std::vector<int32_t>>());
    }
  }
}

TEST_CASE("random: erf_inv is XLA's on (-1, 1): equal in f64, within an ulp in f32, on every backend", "[random]") {
  const json& e = values()["erf_inv"];
  const std::vector<float> x32 = floats<float>(e["f32_in"]), want32 = floats<float>(e["f32_out"]);
  const std::vector<double> x64 = floats<double>(e["f64_in"]), want64 = floats<double>(e["f64_out"]);
  const Array a32 = array(x32, {static_cast<int64_t>(x32.size())});
  const Array a64 = array(x64, {static_cast<int64_t>(x64.size())});
  auto f = [](const Array& x) { return erf_inv(x); };
  for (const Mode& m : modes()) {
    INFO(m.name);
    CHECK(max_ulps(m.run(f, a32).to_vector<float>(), want32) <= 1);
    CHECK(max_ulps(m.run(f, a64).to_vector<double>(), want64) == 0);
  }
  // The ends and beyond: +-inf at +-1, NaN outside, as lax.erf_inv.
  const std::vector<float> ends = erf_inv(array(std::vector<float>{1, -1, 1.5f, -2}, {4})).to_vector<float>();
  CHECK(ends[0] == std::numeric_limits<float>::infinity());
  CHECK(ends[1] == -std::numeric_limits<float>::infinity());
  CHECK(std::isnan(ends[2]));
  CHECK(std::isnan(ends[3]));
}

TEST_CASE("random: erf_inv inverts erf, and its derivative is sqrt(pi)/2 exp(erf_inv(x)^2)", "[random]") {
  const Array x = array(std::vector<double>{-0.999, -0.7, -0.2, 0.0, 0.3, 0.9, 0.99999}, {7});
  const std::vector<double> y = erf_inv(x).to_vector<double>(), xs = x.to_vector<double>();
  for (size_t i = 0; i < xs.size(); ++i) CHECK(std::erf(y[i]) == Approx(xs[i]).epsilon(1e-15).margin(1e-15));
  const std::vector<double> g = grad([](const Array& v) { return sum(erf_inv(v)); })(x).to_vector<double>();
  for (size_t i = 0; i < xs.size(); ++i)
    CHECK(g[i] == Approx(std::sqrt(M_PI) / 2 * std::exp(y[i] * y[i])).epsilon(1e-13));
}

TEST_CASE("random: fold_in of a traced key equals the eager one, batched keys too", "[random]") {
  const Array keys = stack(std::vector<Array>{random::key(1), random::key(2), random::key(3)});
  const Array eager = random::fold_in(keys, 99);
  const Array traced = jit([](const Array& k) { return random::fold_in(k, 99); })(keys);
  CHECK(eager.to_vector<uint32_t>() == traced.to_vector<uint32_t>());
  const std::vector<uint32_t> words = eager.to_vector<uint32_t>();
  for (int i = 0; i < 3; ++i)
    CHECK(random::fold_in(random::key(static_cast<uint64_t>(i + 1)), 99).to_vector<uint32_t>() ==
          std::vector<uint32_t>(words.begin() + 2 * i, words.begin() + 2 * i + 2));
  const Array mapped = vmap([](const Array& k) { return random::fold_in(k, 99); })(keys);
  CHECK(mapped.to_vector<uint32_t>() == eager.to_vector<uint32_t>());
}

namespace {

// The largest distance of a float sampler's draw from JAX's in units of the
// dtype's epsilon, relative for |x| >= 1 and absolute below: a draw is a
// function of a uniform u near 1 in size, whose last bit moves small results
// by many of their own ulps.
template <class T>
double sampler_eps(const json& c, const std::string& field, const std::function<Array()>& draw) {
  INFO(field);
  const std::vector<T> got = draw().to_vector<T>(), want = floats<T>(c[field]);
  REQUIRE(got.size() == want.size());
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double scale = std::max(1.0, std::abs(static_cast<double>(want[i])));
    worst = std::max(worst, std::abs(static_cast<double>(got[i]) - static_cast<double>(want[i])) / scale /
                                std::numeric_limits<T>::epsilon());
  }
  if (worst > 0) UNSCOPED_INFO(field << ": " << worst << " eps from JAX's");
  return worst;
}

}  // namespace

TEST_CASE("random: the other samplers draw JAX's numbers within a few ulps", "[random]") {
  for (const json& c : values()["keys"]) {
    INFO("seed " << seed_of(c));
    const Array k = random::key(seed_of(c));
    // Bounds in eps (sampler_eps): the samplers call log, log1p, tan, erf and erf_inv, which XLA
    // evaluates with its own approximations where graft calls the C library's (docs/API.md).
    CHECK(sampler_eps<float>(c, "truncated_normal_f32", [&] { return random::truncated_normal(k, -2, 2, {9}, f32); }) <=
          4);
    CHECK(sampler_eps<double>(c, "truncated_normal_f64",
                              [&] { return random::truncated_normal(k, -2, 2, {9}, f64); }) <= 4);
    CHECK(sampler_eps<float>(c, "truncated_normal_m1_3_f32",
                             [&] { return random::truncated_normal(k, -1, 3, {9}, f32); }) <= 4);
    CHECK(sampler_eps<double>(c, "truncated_normal_m1_3_f64",
                              [&] { return random::truncated_normal(k, -1, 3, {9}, f64); }) <= 4);
    for (DType dt : {f32, f64}) {
      const std::string suffix = dt == f32 ? "_f32" : "_f64";
      const std::vector<std::pair<std::string, std::function<Array()>>> samplers = {
          {"exponential", [&] { return random::exponential(k, {9}, dt); }},
          {"gumbel", [&] { return random::gumbel(k, {9}, dt); }},
          {"laplace", [&] { return random::laplace(k, {9}, dt); }},
          {"logistic", [&] { return random::logistic(k, {9}, dt); }},
          {"cauchy", [&] { return random::cauchy(k, {9}, dt); }}};
      for (const auto& [name, draw] : samplers) {
        // f64: XLA's log1p is Cephes' rational function below |x| = 0.41, up to 36 eps from the
        // correctly rounded value that graft's log1p returns there (JAX's draws are the less accurate).
        if (dt == f32)
          CHECK(sampler_eps<float>(c, name + suffix, draw) <= 4);
        else
          CHECK(sampler_eps<double>(c, name + suffix, draw) <= 40);
      }
    }
    CHECK(random::rademacher(k, {10}).to_vector<int32_t>() == c["rademacher_i32"].get<std::vector<int32_t>>());
    const Array logits = array(std::vector<float>{0.1f, 2.0f, -1.0f, 0.5f, 3.0f, 0.0f, 0.0f, 0.0f}, {2, 4});
    CHECK(random::categorical(k, logits).to_vector<int32_t>() == c["categorical"].get<std::vector<int32_t>>());
    CHECK(random::categorical(k, logits, -1, {5, 2}).to_vector<int32_t>() ==
          c["categorical_5x2"].get<std::vector<int32_t>>());
    CHECK(random::categorical(k, logits, 0).to_vector<int32_t>() == c["categorical_axis0"].get<std::vector<int32_t>>());
  }
}

TEST_CASE("random: nn::initializers give JAX's weights for the same key", "[random]") {
  namespace init = nn::initializers;
  for (const json& c : values()["keys"]) {
    INFO("seed " << seed_of(c));
    const Array k = random::key(seed_of(c));
    CHECK(sampler_eps<float>(c, "lecun_normal_4x3", [&] { return init::lecun_normal()(k, {4, 3}); }) <= 4);
    CHECK(sampler_eps<double>(c, "lecun_normal_4x3_f64", [&] { return init::lecun_normal()(k, {4, 3}, f64); }) <= 4);
    CHECK(sampler_eps<float>(c, "glorot_uniform_3x5", [&] { return init::glorot_uniform()(k, {3, 5}); }) == 0);
    CHECK(sampler_eps<float>(c, "he_normal_2x2x3x4", [&] { return init::he_normal()(k, {2, 2, 3, 4}); }) <= 4);
    CHECK(sampler_eps<float>(c, "truncated_normal_init_6", [&] { return init::truncated_normal(0.5)(k, {6}); }) <= 4);
    CHECK(sampler_eps<float>(c, "normal_init_6", [&] { return init::normal(1.5)(k, {6}); }) <= 3);
    CHECK(sampler_eps<float>(c, "uniform_init_6", [&] { return init::uniform(2.0)(k, {6}); }) == 0);
  }
  CHECK_THROWS_AS(init::lecun_normal()(random::key(0), {5}), ShapeError);  // fans need two axes
  CHECK_THROWS_AS(init::variance_scaling(1, "fan_sideways", "normal"), Error);
  CHECK_THROWS_AS(init::glorot_normal()(random::key(0), {2, 2}, i32), DTypeError);
}

TEST_CASE("random: orthogonal and the orthogonal initializer are JAX's", "[random]") {
  namespace init = nn::initializers;
  for (const json& c : values()["keys"]) {
    INFO("seed " << seed_of(c));
    const Array k = random::key(seed_of(c));
    // The same normals; the QR differs from LAPACK's by roundings (Eigen's
    // Householder reflectors below 128 rows), a few eps.
    auto check = [&](DType dt, const std::string& suffix) {
      auto eps = [&](const std::string& field, const std::function<Array()>& draw) {
        return dt == f32 ? sampler_eps<float>(c, field + suffix, draw) : sampler_eps<double>(c, field + suffix, draw);
      };
      CHECK(eps("orthogonal_", [&] { return random::orthogonal(k, 4, {2}, dt); }) <= 8);
      CHECK(eps("orthogonal_wide_", [&] { return random::orthogonal(k, 3, {}, dt, 5); }) <= 8);
      CHECK(eps("orthogonal_tall_", [&] { return random::orthogonal(k, 6, {}, dt, 2); }) <= 8);
      CHECK(eps("orthogonal_init_", [&] { return init::orthogonal(1.5)(k, {3, 2, 4}, dt); }) <= 8);
      CHECK(eps("orthogonal_init_axis0_", [&] { return init::orthogonal(1.0, 0)(k, {3, 5}, dt); }) <= 8);
    };
    check(f32, "f32");
    check(f64, "f64");
  }
  const Array q = random::orthogonal(random::key(3), 5, {}, f64);
  CHECK(q.shape() == Shape{5, 5});
  const std::vector<double> qtq = matmul(transpose(q), q).to_vector<double>();
  for (size_t i = 0; i < qtq.size(); ++i) CHECK(qtq[i] == Approx(i % 6 == 0 ? 1.0 : 0.0).margin(1e-14));
  CHECK(init::orthogonal()(random::key(0), {0, 3}).shape() == Shape{0, 3});
  CHECK_THROWS_AS(init::orthogonal()(random::key(0), {5}), ShapeError);
  CHECK_THROWS_AS(random::orthogonal(random::key(0), 3, {}, i32), DTypeError);
}

TEST_CASE("random: permutation is JAX's: one sort round, two, and of rows and columns", "[random]") {
  for (const json& c : values()["keys"]) {
    INFO("seed " << seed_of(c));
    const Array k = random::key(seed_of(c));
    for (const Mode& m : modes()) {
      INFO(m.name);
      CHECK(m.run([](const Array& key) { return random::permutation(key, 10); }, k).to_vector<int32_t>() ==
            c["permutation_10"].get<std::vector<int32_t>>());
      // 2000 elements take two rounds (ceil(3 ln 2000 / ln(2^32 - 1)) = 2).
      CHECK(m.run([](const Array& key) { return random::permutation(key, 2000); }, k).to_vector<int32_t>() ==
            c["permutation_2000"].get<std::vector<int32_t>>());
    }
    std::vector<float> twelve(12);
    for (int i = 0; i < 12; ++i) twelve[static_cast<size_t>(i)] = static_cast<float>(i);
    const Array m = array(twelve, {4, 3});
    CHECK(random::permutation(k, m, 0).to_vector<float>() == floats<float>(c["permutation_rows"]));
    CHECK(random::permutation(k, m, 1).to_vector<float>() == floats<float>(c["permutation_cols"]));
    std::vector<float> seven(7);
    for (int i = 0; i < 7; ++i) seven[static_cast<size_t>(i)] = 1.5f * static_cast<float>(i);
    CHECK(random::permutation(k, array(seven, {7})).to_vector<float>() == floats<float>(c["permutation_vector"]));
  }
  CHECK_THROWS_AS(random::permutation(random::split(random::key(0), 2)[0], -1), ShapeError);
  CHECK_THROWS_AS(random::permutation(stack(std::vector<Array>{random::key(0), random::key(1)}), 5), ShapeError);
}

namespace {

// The share of draws within `eps` (relative, absolute below 1) of JAX's: a
// rejection sampler's accept test may round the other way now and then (XLA
// contracts multiply-adds into FMAs), and then that draw differs entirely.
template <class T>
double share_close(const std::vector<T>& got, const std::vector<T>& want, double eps) {
  REQUIRE(got.size() == want.size());
  size_t close = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double scale = std::max(1.0, std::abs(static_cast<double>(want[i])));
    close += std::abs(static_cast<double>(got[i]) - static_cast<double>(want[i])) / scale <=
             eps * std::numeric_limits<T>::epsilon();
  }
  return static_cast<double>(close) / static_cast<double>(got.size());
}

template <class T>
void check_gamma_family(const json& c, const Array& k, DType dt, const std::string& suffix) {
  std::vector<T> alphas;
  for (double a : {0.05, 0.3, 1.0, 2.5, 7.0})
    for (int i = 0; i < 40; ++i) alphas.push_back(static_cast<T>(a));
  const Array a = array(alphas, {5, 40});
  const std::vector<T> g = random::gamma(k, a, {}, dt).template to_vector<T>();
  INFO("gamma" << suffix);
  CHECK(share_close(g, floats<T>(c["gamma" + suffix]), 8) >= 0.99);
  // log-space draws go through exponential's log1p, up to 36 eps from XLA's in f64 (see above)
  CHECK(share_close(random::loggamma(k, a, {}, dt).template to_vector<T>(), floats<T>(c["loggamma" + suffix]),
                    dt == f32 ? 8 : 64) >= 0.99);
  // the reparameterised gradient: random_gamma_grad(a, draw), JAX's
  const std::vector<T> dg =
      grad([&k, dt](const Array& v) { return sum(random::gamma(k, v, {}, dt)); })(a).template to_vector<T>();
  CHECK(share_close(dg, floats<T>(c["gamma_grad" + suffix]), dt == f32 ? 64 : 1e5) >= 0.99);
  const Array b = array(std::vector<T>{0.7, 2.0, 9.0}, {3});
  CHECK(share_close(random::beta(k, scalar(0.5, dt), b, {4, 3}, dt).template to_vector<T>(),
                    floats<T>(c["beta" + suffix]), 16) >= 0.9);
  CHECK(share_close(random::dirichlet(k, array(std::vector<T>{0.2, 1.0, 3.0}, {3}), {5}, dt).template to_vector<T>(),
                    floats<T>(c["dirichlet" + suffix]), 16) >= 0.9);
}

}  // namespace

TEST_CASE("random: gamma, loggamma, beta and dirichlet draw JAX's numbers, gamma's gradient JAX's", "[random]") {
  for (const json& c : values()["keys"]) {
    INFO("seed " << seed_of(c));
    const Array k = random::key(seed_of(c));
    check_gamma_family<float>(c, k, f32, "_f32");
    check_gamma_family<double>(c, k, f64, "_f64");
  }
}

TEST_CASE("random: gamma's moments and its gradient against the CDF", "[random]") {
  const Array k = random::key(3);
  for (double a : {0.3, 2.5}) {
    const std::vector<double> x = random::gamma(k, a, {100000}, f64).to_vector<double>();
    double mean = 0, var = 0;
    for (double v : x) mean += v;
    mean /= static_cast<double>(x.size());
    for (double v : x) var += (v - mean) * (v - mean);
    var /= static_cast<double>(x.size() - 1);
    INFO("a " << a);
    CHECK(mean == Approx(a).epsilon(4 * std::sqrt(a / 1e5) / a));  // Gamma(a, 1): mean a, variance a
    CHECK(var == Approx(a).epsilon(0.03));
  }
  // d draw / d a keeps P(a, draw) fixed: dP/da + dP/dx * dx/da = 0
  const Array a = array(std::vector<double>{0.4, 1.5, 6.0}, {3});
  const Array x = random::gamma(k, a, {}, f64);
  const std::vector<double> dx =
      grad([&k](const Array& v) { return sum(random::gamma(k, v, {}, f64)); })(a).to_vector<double>();
  const std::vector<double> av = a.to_vector<double>(), xv = x.to_vector<double>();
  for (size_t i = 0; i < av.size(); ++i) {
    const double h = 1e-6;
    auto p = [](double aa, double xx) { return special::gammainc(scalar(aa, f64), scalar(xx, f64)).item<double>(); };
    const double dpda = (p(av[i] + h, xv[i]) - p(av[i] - h, xv[i])) / (2 * h);
    const double dpdx = (p(av[i], xv[i] * (1 + h)) - p(av[i], xv[i] * (1 - h))) / (2 * h * xv[i]);
    CHECK(dx[i] == Approx(-dpda / dpdx).epsilon(1e-5));
  }
  CHECK_THROWS_AS(random::gamma(reshape(k, {1, 2}), 1.0), ShapeError);
  CHECK_THROWS_AS(random::gamma(k, array({1.0, 2.0}), {3}), ShapeError);
}

TEST_CASE("random: choice draws jax.random.choice's draws, with and without replacement and p", "[random]") {
  for (const json& c : values()["keys"]) {
    INFO("seed " << seed_of(c));
    const Array k = random::key(seed_of(c));
    const Array p = array(std::vector<float>{0.1f, 0.0f, 0.5f, 0.25f, 0.15f}, {5});
    CHECK(random::choice(k, 10, {7}).to_vector<int32_t>() == c["choice_10"].get<std::vector<int32_t>>());
    CHECK(random::choice(k, 5, {3, 4}, true, p).to_vector<int32_t>() == c["choice_p"].get<std::vector<int32_t>>());
    CHECK(random::choice(k, 10, {6}, false).to_vector<int32_t>() == c["choice_noreplace"].get<std::vector<int32_t>>());
    CHECK(random::choice(k, 5, {3}, false, p).to_vector<int32_t>() ==
          c["choice_noreplace_p"].get<std::vector<int32_t>>());
    const Array rows = reshape(astype(arange(12), f32), {4, 3});
    CHECK(random::choice(k, rows, {2}, true, {}, 1).to_vector<float>() == floats<float>(c["choice_rows"]));
  }
  const Array k = random::key(0);
  CHECK(random::choice(k, 5, {0}).shape() == Shape{0});
  CHECK_THROWS_AS(random::choice(k, 3, {4}, false), ShapeError);
  CHECK_THROWS_AS(random::choice(k, 5, {2}, true, array(std::vector<float>{0.5f, 0.5f}, {2})), ShapeError);
  // a zero-probability entry is never drawn
  const std::vector<int32_t> many =
      random::choice(k, 5, {20000}, true, array(std::vector<float>{0.1f, 0.0f, 0.5f, 0.25f, 0.15f}, {5}))
          .to_vector<int32_t>();
  std::vector<int> counts(5, 0);
  for (int32_t i : many) ++counts[static_cast<size_t>(i)];
  CHECK(counts[1] == 0);
  CHECK(counts[2] / 20000.0 == Approx(0.5).margin(0.02));
}

TEST_CASE("random: poisson draws jax.random.poisson's draws, and its mean and variance are lam", "[random]") {
  const Array lam = array(std::vector<float>{0.0f, 0.5f, 3.0f, 9.9f, 10.0f, 37.5f, 1000.0f}, {7});
  for (const json& c : values()["keys"]) {
    INFO("seed " << seed_of(c));
    const std::vector<int32_t> got = random::poisson(random::key(seed_of(c)), lam, {50, 7}).to_vector<int32_t>();
    const std::vector<int32_t> want = c["poisson"].get<std::vector<int32_t>>();
    REQUIRE(got.size() == want.size());
    size_t equal = 0;
    for (size_t i = 0; i < got.size(); ++i) equal += got[i] == want[i];
    // all but where an f32 accept test rounds the other way (XLA's own f32 log and lgamma)
    CHECK(static_cast<double>(equal) / static_cast<double>(got.size()) >= 0.98);
  }
  for (double rate : {2.0, 25.0}) {
    const std::vector<int32_t> x = random::poisson(random::key(5), rate, {100000}).to_vector<int32_t>();
    double mean = 0, var = 0;
    for (int32_t v : x) mean += v;
    mean /= static_cast<double>(x.size());
    for (int32_t v : x) var += (v - mean) * (v - mean);
    var /= static_cast<double>(x.size() - 1);
    INFO("lam " << rate);
    CHECK(mean == Approx(rate).epsilon(4 * std::sqrt(rate / 1e5) / rate));
    CHECK(var == Approx(rate).epsilon(0.03));
  }
  CHECK(random::poisson(random::key(0), 0.0, {3}).to_vector<int32_t>() == std::vector<int32_t>{0, 0, 0});
  CHECK_THROWS_AS(random::poisson(random::key(0), 1.0, {2}, f32), DTypeError);
}

TEST_CASE("random: truncated_normal with Array bounds draws JAX's numbers", "[random]") {
  for (const json& c : values()["keys"]) {
    INFO("seed " << seed_of(c));
    const Array k = random::key(seed_of(c));
    for (DType dt : {f32, f64}) {
      const Array lo = astype(array(std::vector<double>{-2.0, 0.0, 1.5}, {3}), dt);
      const Array hi = astype(array(std::vector<double>{2.0, 4.0}, {2, 1}), dt);
      auto draw = [&] { return random::truncated_normal(k, lo, hi, {2, 3}, dt); };
      if (dt == f32)
        CHECK(sampler_eps<float>(c, "truncated_normal_arrays_f32", draw) <= 4);
      else
        CHECK(sampler_eps<double>(c, "truncated_normal_arrays_f64", draw) <= 4);
      // scalar bounds: the double overload's draws exactly
      const Array one = random::truncated_normal(k, scalar(-2.0, dt), scalar(2.0, dt), {9}, dt);
      CHECK(astype(one, f64).to_vector<double>() ==
            astype(random::truncated_normal(k, -2, 2, {9}, dt), f64).to_vector<double>());
    }
  }
  CHECK_THROWS_AS(random::truncated_normal(random::key(0), array({0.0, 1.0}), array({1.0, 2.0}), {3}), ShapeError);
}

TEST_CASE("random: uniform, bernoulli and randint with Array parameters draw JAX's numbers", "[random]") {
  for (const json& c : values()["keys"]) {
    INFO("seed " << seed_of(c));
    const Array k = random::key(seed_of(c));
    for (const Mode& m : modes()) {
      INFO(m.name);
      auto draw = [&](const std::function<Array(const Array&)>& f) { return m.run(f, k); };
      for (DType dt : {f32, f64}) {
        const Array lo = astype(array(std::vector<double>{-1.0, 0.0, 2.5}, {3}), dt);
        const Array hi = astype(array(std::vector<double>{3.0, 1e3}, {2, 1}), dt);
        const Array u = draw([&](const Array& key) { return random::uniform(key, {2, 3}, lo, hi, dt); });
        // One product and one sum, the f32 one fused as XLA's: exact.
        if (dt == f32)
          CHECK(max_ulps(u.to_vector<float>(), floats<float>(c["uniform_arrays_f32"])) == 0);
        else
          CHECK(max_ulps(u.to_vector<double>(), floats<double>(c["uniform_arrays_f64"])) == 0);
      }
      const Array p32 = array(std::vector<float>{0.1f, 0.5f, 0.9f}, {3});
      CHECK(draw([&](const Array& key) {
              return random::bernoulli(key, p32, {4, 3});
            }).to_vector<bool>() == c["bernoulli_arrays_f32"].get<std::vector<bool>>());
      const Array p64 = array(std::vector<double>{0.25, 0.75}, {2, 1});
      CHECK(draw([&](const Array& key) { return random::bernoulli(key, p64); }).to_vector<bool>() ==
            c["bernoulli_arrays_f64"].get<std::vector<bool>>());
      const Array lo = array(std::vector<int64_t>{-5, 0, 100, INT32_MIN}, {4});
      const Array hi = array(std::vector<int64_t>{17, int64_t{1} << 31}, {2, 1});
      const Array r = draw([&](const Array& key) { return random::randint(key, {2, 4}, lo, hi); });
      CHECK(r.to_vector<int32_t>() == c["randint_arrays"].get<std::vector<int32_t>>());
    }
    // Scalar Arrays draw exactly what the number overloads draw.
    CHECK(random::uniform(k, {9}, scalar(-3.0, f32), scalar(5.0, f32), f32).to_vector<float>() ==
          random::uniform(k, {9}, -3, 5, f32).to_vector<float>());
    CHECK(random::bernoulli(k, scalar(0.3, f32), {10}).to_vector<bool>() ==
          random::bernoulli(k, 0.3, {10}).to_vector<bool>());
    CHECK(random::randint(k, {10}, scalar(-5.0, i32), scalar(17.0, i32)).to_vector<int32_t>() ==
          random::randint(k, {10}, -5, 17).to_vector<int32_t>());
  }
  const Array k = random::key(0);
  CHECK_THROWS_AS(random::uniform(k, {3}, array({0.0, 1.0}), array({1.0, 2.0})), ShapeError);
  CHECK_THROWS_AS(random::bernoulli(k, array({0.5, 0.5}), {3}), ShapeError);
  CHECK_THROWS_AS(random::randint(k, {2}, array({true, false}), array({1.0, 2.0})), DTypeError);
  CHECK_THROWS_AS(random::randint(k, {2}, array({0.0}), array({1.0}), f32), DTypeError);
}

TEST_CASE("random: multivariate_normal draws JAX's numbers", "[random]") {
  const std::vector<double> cov = {2.0, 0.3, -0.4, 0.3, 1.0, 0.2, -0.4, 0.2, 1.5};
  for (const json& c : values()["keys"]) {
    INFO("seed " << seed_of(c));
    const Array k = random::key(seed_of(c));
    for (DType dt : {f32, f64}) {
      const Array mean = astype(array(std::vector<double>{1.0, -2.0, 0.5}, {3}), dt);
      const Array cv = astype(array(cov, {3, 3}), dt);
      const Array covs = astype(array(cov, {3, 3}) * array(std::vector<double>{1.0, 2.0}, {2, 1, 1}), dt);
      // The same normals as JAX's; the factor and the product differ from XLA's by roundings (measured: 1 eps).
      auto one = [&] { return random::multivariate_normal(k, mean, cv, {4}); };
      auto batched = [&] { return random::multivariate_normal(k, zeros({2, 1, 3}, dt), covs); };
      if (dt == f32) {
        CHECK(sampler_eps<float>(c, "multivariate_normal_f32", one) <= 2);
        CHECK(sampler_eps<float>(c, "multivariate_normal_batched_f32", batched) <= 2);
      } else {
        CHECK(sampler_eps<double>(c, "multivariate_normal_f64", one) <= 2);
        CHECK(sampler_eps<double>(c, "multivariate_normal_batched_f64", batched) <= 2);
      }
      CHECK(random::multivariate_normal(k, zeros({2, 1, 3}, dt), covs).shape() == Shape{2, 2, 3});
    }
  }
  const Array k = random::key(0);
  CHECK_THROWS_AS(random::multivariate_normal(k, zeros({3}), zeros({2, 2})), ShapeError);
  CHECK_THROWS_AS(random::multivariate_normal(k, scalar(0.0), zeros({1, 1})), ShapeError);
  // Moments over many draws: the sample covariance approaches cov.
  const Array cv = array(cov, {3, 3});
  const Array x = random::multivariate_normal(k, zeros({3}, f64), cv, {200000});
  const Array xc = x - mean(x, {0});
  const Array sample_cov = matmul(transpose(xc), xc) / 199999.0;
  const std::vector<double> got = sample_cov.to_vector<double>();
  for (size_t i = 0; i < cov.size(); ++i) CHECK(got[i] == Approx(cov[i]).margin(0.02));
}

namespace {

// The largest distance in ulps of the half dtype between graft's draw and
// JAX's (hex bit patterns), as the order of the 16-bit patterns.
int64_t half_ulps(const Array& got, const json& hex) {
  REQUIRE((got.dtype() == f16 || got.dtype() == bf16));
  const std::vector<uint16_t> g = bitcast(got, u16).to_vector<uint16_t>();
  REQUIRE(g.size() == hex.size());
  auto ordered = [](uint16_t b) { return b & 0x8000 ? -int64_t{b & 0x7fff} : int64_t{b}; };
  int64_t worst = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    const auto w = static_cast<uint16_t>(std::stoul(hex[i].get<std::string>(), nullptr, 16));
    worst = std::max(worst, std::abs(ordered(g[i]) - ordered(w)));
  }
  return worst;
}

}  // namespace

TEST_CASE("random: bits, uniform, normal and randint in every dtype are JAX's", "[random][dtypes]") {
  for (const json& c : values()["keys"]) {
    INFO("seed " << seed_of(c));
    const Array k = random::key(seed_of(c));
    for (const Mode& m : modes()) {
      INFO(m.name);
      auto draw = [&](const std::function<Array(const Array&)>& f) { return m.run(f, k); };
      // 8- and 16-bit bits are the low bits of the 32-bit draw; 64-bit ones both words.
      CHECK(draw([](const Array& key) { return random::bits(key, {7}, u8); }).to_vector<uint8_t>() ==
            c["bits_uint8"].get<std::vector<uint8_t>>());
      CHECK(draw([](const Array& key) { return random::bits(key, {7}, u16); }).to_vector<uint16_t>() ==
            c["bits_uint16"].get<std::vector<uint16_t>>());
      CHECK(draw([](const Array& key) { return random::bits(key, {7}, u64); }).to_vector<uint64_t>() ==
            c["bits_uint64"].get<std::vector<uint64_t>>());
      for (const DType dt : {f16, bf16}) {
        const std::string s = std::string("_") + dtype_name(dt);
        INFO(dtype_name(dt));
        // The halves' ops round each result as XLA's CPU code does: JAX's draws bit for bit.
        CHECK(half_ulps(draw([dt](const Array& key) { return random::uniform(key, {200}, 0, 1, dt); }),
                        c["uniform" + s]) == 0);
        CHECK(half_ulps(draw([dt](const Array& key) { return random::uniform(key, {200}, -3, 5, dt); }),
                        c["uniform_m3_5" + s]) == 0);
        CHECK(half_ulps(draw([dt](const Array& key) { return random::normal(key, {200}, dt); }), c["normal" + s]) == 0);
      }
    }
    // randint in each integer width: the multiplier wraps in the dtype's unsigned width, as JAX's.
    for (const auto& [name, dt, lo, hi] : std::vector<std::tuple<const char*, DType, int64_t, int64_t>>{
             {"randint_int8_-5_17", i8, -5, 17},
             {"randint_int8_-128_128", i8, -128, 128},
             {"randint_uint8_3_250", u8, 3, 250},
             {"randint_int16_-300_30000", i16, -300, 30000},
             {"randint_uint16_0_65536", u16, 0, 65536},
             {"randint_int64_-1099511627776_1099511627779", i64, -(int64_t{1} << 40), (int64_t{1} << 40) + 3},
             {"randint_int64_-9223372036854775808_9223372036854775807", i64, INT64_MIN, INT64_MAX},
             {"randint_uint32_7_4294967291", u32, 7, 4294967291},
             {"randint_uint64_0_4611686018427387915", u64, 0, (int64_t{1} << 62) + 11}}) {
      INFO(name);
      const Array x = random::randint(k, {20}, lo, hi, dt);
      CHECK(x.dtype() == dt);
      CHECK(astype(x, i64).to_vector<int64_t>() == c[name].get<std::vector<int64_t>>());
    }
  }
}

TEST_CASE("random: the samplers and initializers in the halves are JAX's within an ulp", "[random][dtypes]") {
  namespace init = nn::initializers;
  for (const json& c : values()["keys"]) {
    INFO("seed " << seed_of(c));
    const Array k = random::key(seed_of(c));
    for (const DType dt : {f16, bf16}) {
      const std::string s = std::string("_") + dtype_name(dt);
      INFO(dtype_name(dt));
      CHECK(half_ulps(random::truncated_normal(k, -2, 2, {200}, dt), c["truncated_normal" + s]) <= 1);
      CHECK(half_ulps(random::exponential(k, {50}, dt), c["exponential" + s]) <= 1);
      // log(-log(u)) and log(u) - log1p(-u): near u = 1/e and 1/2 XLA's own f32 log (not the C
      // library's) moves a few results by 2 to 3 ulps of the half, as in f32 (docs/API.md).
      CHECK(half_ulps(random::gumbel(k, {50}, dt), c["gumbel" + s]) <= 4);
      CHECK(half_ulps(random::laplace(k, {50}, dt), c["laplace" + s]) <= 1);
      CHECK(half_ulps(random::logistic(k, {50}, dt), c["logistic" + s]) <= 4);
      CHECK(half_ulps(random::cauchy(k, {50}, dt), c["cauchy" + s]) <= 1);
      CHECK(half_ulps(init::lecun_normal()(k, {8, 5}, dt), c["lecun_normal_8x5" + s]) <= 1);
    }
  }
  CHECK_THROWS_AS(random::bits(random::key(0), {3}, i32), DTypeError);
  CHECK_THROWS_AS(random::uniform(random::key(0), {3}, 0, 1, i8), DTypeError);
  CHECK_THROWS_AS(random::randint(random::key(0), {3}, 0, 300, u8), Error);  // past u8's range
  CHECK_THROWS_AS(random::randint(random::key(0), {3}, -1, 3, u16), Error);
  CHECK_THROWS_AS(random::randint(random::key(0), {3}, 0, 3, f16), DTypeError);
}
