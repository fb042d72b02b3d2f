// graft::special and the elementwise functions added with it, measured in
// ulps against mpmath's values at 100 digits (tests/special/special_values.json,
// written by scripts/make_special_values.py with JAX's values beside them):
// within each function's stated bound per range and dtype, the bounds
// docs/SPECIAL_FUNCTIONS.md lists; NaN, infinities and zeros exactly. The
// generated C++ computes the interpreter's bits and the CUDA backend (the
// emulated driver here, a GPU under scripts/gpu_check.sh) agrees within a
// few ulps; derivatives against finite differences and JAX's rules.
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "api/dispatch.h"
#include "graft/graft.h"
#include "graft/testing.h"

using namespace graft;
using json = nlohmann::json;

namespace {

const json& values() {
  static const json v = [] {
    std::ifstream in(GRAFT_SPECIAL_VALUES_FILE);
    REQUIRE(in.good());
    return json::parse(in);
  }();
  return v;
}

template <class F>
std::vector<F> decode(const json& hexes) {
  using U = std::conditional_t<sizeof(F) == 4, uint32_t, uint64_t>;
  std::vector<F> out;
  for (const json& h : hexes)
    out.push_back(std::bit_cast<F>(static_cast<U>(std::stoull(h.get<std::string>(), nullptr, 16))));
  return out;
}

using Fn = std::function<Array(const std::vector<Array>&)>;

Array prim(ir::Op op, const std::vector<Array>& a) { return detail::bind1(op, a, {}, std::source_location::current()); }

const std::map<std::string, Fn>& functions() {
  static const std::map<std::string, Fn> k = {
      {"erfc", [](const auto& a) { return special::erfc(a[0]); }},
      {"exp2", [](const auto& a) { return exp2(a[0]); }},
      {"log2", [](const auto& a) { return log2(a[0]); }},
      {"log10", [](const auto& a) { return log10(a[0]); }},
      {"asinh", [](const auto& a) { return asinh(a[0]); }},
      {"acosh", [](const auto& a) { return acosh(a[0]); }},
      {"atanh", [](const auto& a) { return atanh(a[0]); }},
      {"lgamma", [](const auto& a) { return special::gammaln(a[0]); }},
      {"digamma", [](const auto& a) { return special::digamma(a[0]); }},
      {"bessel_i0e", [](const auto& a) { return special::i0e(a[0]); }},
      {"bessel_i1e", [](const auto& a) { return special::i1e(a[0]); }},
      {"ndtr", [](const auto& a) { return special::ndtr(a[0]); }},
      {"log_ndtr", [](const auto& a) { return special::log_ndtr(a[0]); }},
      {"ndtri", [](const auto& a) { return special::ndtri(a[0]); }},
      {"polygamma", [](const auto& a) { return special::polygamma(a[0], a[1]); }},
      {"zeta", [](const auto& a) { return special::zeta(a[0], a[1]); }},
      {"igamma", [](const auto& a) { return special::gammainc(a[0], a[1]); }},
      {"igammac", [](const auto& a) { return special::gammaincc(a[0], a[1]); }},
      {"igamma_grad_a", [](const auto& a) { return prim(ir::Op::igamma_grad_a, a); }},
      {"random_gamma_grad", [](const auto& a) { return prim(ir::Op::random_gamma_grad, a); }},
      {"betainc", [](const auto& a) { return special::betainc(a[0], a[1], a[2]); }},
  };
  return k;
}

// The largest error, in ulps of the correctly rounded value, each function
// is held to per range and dtype (docs/SPECIAL_FUNCTIONS.md), beyond the
// allowance of per_log below. f32 values are the f64 computation rounded
// once, hence 1 wherever f64 is accurate.
int64_t bound(const std::string& fn, const std::string& range, const std::string& dtype) {
  static const std::map<std::string, std::pair<int64_t, int64_t>> k = {
      // {f32, f64}
      {"erfc/all", {1, 2}},
      {"exp2/all", {1, 1}},
      {"log2/all", {1, 1}},
      {"log10/all", {1, 2}},
      {"asinh/all", {1, 2}},
      {"acosh/all", {1, 2}},
      {"atanh/all", {1, 2}},
      {"lgamma/positive", {1, 2}},
      {"lgamma/negative", {1, 4}},
      {"digamma/positive", {1, 6}},
      {"digamma/negative", {1, 200}},  // relative error grows near psi's negative zeros
      {"bessel_i0e/all", {1, 8}},
      {"bessel_i1e/all", {1, 8}},
      {"ndtr/all", {1, 4}},
      {"log_ndtr/all", {1, 4}},
      {"ndtri/all", {1, 4}},
      {"polygamma/all", {1, 8}},
      {"polygamma/negative", {1, 16}},
      {"zeta/all", {1, 16}},
      {"igamma/moderate", {1, 16}},
      {"igamma/large", {1, 16}},
      {"igammac/moderate", {1, 3000}},  // 1 - P where Q is small and a tiny
      {"igammac/large", {1, 1000}},
      {"igamma_grad_a/moderate", {1, 16}},
      {"random_gamma_grad/moderate", {1, 64}},
      {"betainc/moderate", {1, 512}},
      {"betainc/large", {1, 2000}},  // the continued fraction's own rounding, ~sqrt(a + b) steps
  };
  const auto it = k.find(fn + "/" + range);
  REQUIRE(it != k.end());
  return dtype == "f32" ? it->second.first : it->second.second;
}

// Distance in representable values (across zero too).
template <class F>
int64_t ulps(F a, F b) {
  using I = std::conditional_t<sizeof(F) == 4, int32_t, int64_t>;
  auto key = [](F v) {
    const I i = std::bit_cast<I>(v);
    return i < 0 ? static_cast<int64_t>(std::numeric_limits<I>::min()) - static_cast<int64_t>(i)
                 : static_cast<int64_t>(i);
  };
  const __int128 d = static_cast<__int128>(key(a)) - key(b);  // opposite signs far apart overflow int64
  const __int128 m = d < 0 ? -d : d;
  return m > INT64_MAX ? INT64_MAX : static_cast<int64_t>(m);
}

// The error of `got` against `want` in ulps; NaN, infinities and zeros must
// match exactly (-1 marks a mismatch there).
template <class F>
int64_t error(F got, F want) {
  if (std::isnan(want)) return std::isnan(got) ? 0 : -1;
  if (std::isinf(want) || want == 0) return got == want ? 0 : -1;
  if (!std::isfinite(got)) return -1;
  return ulps(got, want);
}

struct Measured {
  int64_t worst = 0;
  int64_t jax_worst = 0;
  std::string where;
};

// Functions computed as exp(a log-sized sum) carry that sum's absolute
// rounding error into the result as a relative one: |log(value)| eps. Their
// bound grows by `per_log` ulps per unit of |log(value)|.
double per_log(const std::string& fn, DType dt) {
  if (dt == DType::f32) return 0;
  for (const char* f : {"igamma", "igammac", "igamma_grad_a", "random_gamma_grad", "betainc"})
    if (fn == f) return 2;
  return 0;
}

template <class F>
Measured measure(const std::string& fn, const json& c, DType dt,
                 const std::function<Array(const std::vector<Array>&)>& run) {
  std::vector<Array> args;
  std::vector<std::vector<F>> ins;
  for (const json& col : c["in"]) {
    ins.push_back(decode<F>(col));
    args.push_back(array(ins.back(), {static_cast<int64_t>(ins.back().size())}));
  }
  const std::vector<F> want = decode<F>(c["want"]), jax = decode<F>(c["jax"]);
  const Array out = run(args);
  CHECK(out.dtype() == dt);
  const std::vector<F> got = out.template to_vector<F>();
  REQUIRE(got.size() == want.size());
  Measured m;
  for (size_t i = 0; i < got.size(); ++i) {
    // the error beyond what the value's size allows (per_log), in ulps
    const int64_t allowance = std::isfinite(want[i]) && want[i] != 0
                                  ? static_cast<int64_t>(per_log(fn, dt) * std::abs(std::log(std::abs(want[i]))))
                                  : 0;
    int64_t e = error(got[i], want[i]);
    if (e > 0) e = std::max<int64_t>(0, e - allowance);
    int64_t ej = error(jax[i], want[i]);
    if (ej > 0) ej = std::max<int64_t>(0, ej - allowance);
    if (ej < 0 || ej > m.jax_worst) m.jax_worst = ej < 0 ? std::max<int64_t>(m.jax_worst, 1 << 30) : ej;
    if (e < 0 || e > m.worst) {
      std::ostringstream os;
      os.precision(sizeof(F) == 4 ? 9 : 17);
      os << fn << "(";
      for (size_t k = 0; k < ins.size(); ++k) os << (k ? ", " : "") << ins[k][i];
      os << ") = " << got[i] << ", want " << want[i];
      m.where = os.str();
      m.worst = e < 0 ? (1 << 30) : e;
    }
  }
  return m;
}

template <class F>
std::vector<F> as_vector(const Array& x) {
  return x.template to_vector<F>();
}

}  // namespace

TEST_CASE("special: every function within its ulp bound of mpmath, f32 and f64", "[special]") {
  const bool print = std::getenv("GRAFT_PRINT_SPECIAL_TABLE") != nullptr;
  int checked = 0;
  for (const auto& [fn, entry] : values()["functions"].items()) {
    const Fn& f = functions().at(fn);
    for (const auto& [range, cases] : entry["ranges"].items()) {
      for (const std::string dname : {"f32", "f64"}) {
        const DType dt = dname == "f32" ? DType::f32 : DType::f64;
        const Measured m =
            dt == DType::f32 ? measure<float>(fn, cases[dname], dt, f) : measure<double>(fn, cases[dname], dt, f);
        INFO(fn << " on " << range << " in " << dname << ": worst " << m.worst << " ulps at " << m.where);
        CHECK(m.worst <= bound(fn, range, dname));
        if (print)
          std::cout << "| " << fn << " | " << range << " | " << dname << " | " << m.worst << " | "
                    << (m.jax_worst >= (1 << 30) ? std::string("wrong special value") : std::to_string(m.jax_worst))
                    << " |\n";
        ++checked;
      }
    }
  }
  CHECK(checked >= 50);
}

TEST_CASE("special: generated C++ computes the interpreter's bits", "[special][codegen]") {
  for (const auto& [fn, entry] : values()["functions"].items()) {
    const Fn& f = functions().at(fn);
    const json& c = entry["ranges"].begin().value()["f64"];
    std::vector<Array> args;
    for (const json& col : c["in"]) {
      const std::vector<double> v = decode<double>(col);
      args.push_back(array(v, {static_cast<int64_t>(v.size())}));
    }
    INFO(fn);
    auto g = [&f](const std::vector<Array>& a) { return f(a) * 1.0; };
    const std::vector<double> compiled =
        as_vector<double>(jit(g, JitOptions{.backend = Backend::cpu, .wait_for_compile = true})(args));
    const std::vector<double> interpreted =
        as_vector<double>(jit(g, JitOptions{.backend = Backend::interpreter})(args));
    REQUIRE(compiled.size() == interpreted.size());
    int64_t differ = 0;
    for (size_t i = 0; i < compiled.size(); ++i)
      if (std::bit_cast<uint64_t>(compiled[i]) != std::bit_cast<uint64_t>(interpreted[i]) &&
          !(std::isnan(compiled[i]) && std::isnan(interpreted[i])))
        ++differ;
    CHECK(differ == 0);
  }
}

TEST_CASE("special: the CUDA backend agrees within a few ulps", "[cuda_devices][special]") {
  for (const auto& [fn, entry] : values()["functions"].items()) {
    const Fn& f = functions().at(fn);
    for (const std::string dname : {"f32", "f64"}) {
      const json& c = entry["ranges"].begin().value()[dname];
      std::vector<Array> args;
      for (const json& col : c["in"]) {
        const std::vector<double> v = decode<double>(col);  // widened below for f32
        args.push_back(array(v, {static_cast<int64_t>(v.size())}));
      }
      INFO(fn << " " << dname);
      if (dname == "f32") {
        args.clear();
        for (const json& col : c["in"]) {
          const std::vector<float> v = decode<float>(col);
          args.push_back(array(v, {static_cast<int64_t>(v.size())}));
        }
      }
      auto g = [&f](const std::vector<Array>& a) { return f(a) * 1.0; };
      const Array gpu = jit(g, JitOptions{.backend = Backend::cuda})(args);
      const Array host = jit(g, JitOptions{.backend = Backend::interpreter})(args);
      const std::vector<double> a = as_vector<double>(astype(gpu, DType::f64)),
                                b = as_vector<double>(astype(host, DType::f64));
      int64_t worst = 0;
      for (size_t i = 0; i < a.size(); ++i) {
        if (std::isnan(a[i]) || std::isnan(b[i])) {
          CHECK(std::isnan(a[i]) == std::isnan(b[i]));
          continue;
        }
        const int64_t e = dname == "f32" ? ulps(static_cast<float>(a[i]), static_cast<float>(b[i])) : ulps(a[i], b[i]);
        worst = std::max(worst, e);
      }
      CHECK(worst <= 8);
    }
  }
}

TEST_CASE("special: derivatives agree with finite differences, to second order where JAX defines it",
          "[special][jvp]") {
  using testing::check_grads;
  using testing::Modes;
  auto points = [](std::vector<double> v) { return array(v, {static_cast<int64_t>(v.size())}); };
  const Array x = points({0.3, 0.7, 1.4616, 2.5, 7.0});
  const std::map<std::string, std::pair<std::function<Array(const Array&)>, Array>> unary = {
      {"erfc", {[](const Array& v) { return special::erfc(v); }, x}},
      {"exp2", {[](const Array& v) { return exp2(v); }, x}},
      {"log2", {[](const Array& v) { return log2(v); }, x}},
      {"log10", {[](const Array& v) { return log10(v); }, x}},
      {"asinh", {[](const Array& v) { return asinh(v); }, x - 1.0}},
      {"acosh", {[](const Array& v) { return acosh(v); }, x + 1.2}},
      {"atanh", {[](const Array& v) { return atanh(v); }, x / 8.0}},
      {"gammaln", {[](const Array& v) { return special::gammaln(v); }, x}},
      {"digamma", {[](const Array& v) { return special::digamma(v); }, x}},
      {"i0e", {[](const Array& v) { return special::i0e(v); }, x - 2.0}},
      {"i1e", {[](const Array& v) { return special::i1e(v); }, x - 2.0}},
      {"i0", {[](const Array& v) { return special::i0(v); }, x - 2.0}},
      {"ndtr", {[](const Array& v) { return special::ndtr(v); }, x - 2.0}},
      {"log_ndtr", {[](const Array& v) { return special::log_ndtr(v); }, x * 3.0 - 12.0}},
      {"ndtri", {[](const Array& v) { return special::ndtri(v); }, x / 8.0}},
      {"entr", {[](const Array& v) { return special::entr(v); }, x}},
      {"logit", {[](const Array& v) { return special::logit(v); }, x / 8.0}},
  };
  for (const auto& [name, fx] : unary) {
    INFO(name);
    CHECK_NOTHROW(check_grads(fx.first, std::make_tuple(fx.second), 2, Modes::fwd_and_rev, 1e-4));
  }
  const Array a = points({0.5, 1.0, 3.0, 10.0, 40.0});
  const Array xs = points({0.2, 1.5, 2.0, 12.0, 30.0});
  // igamma's second derivative in a is igamma_grad_a's, which JAX does not define: first order in a.
  CHECK_NOTHROW(check_grads([](const Array& p, const Array& q) { return special::gammainc(p, q); },
                            std::make_tuple(a, xs), 1, Modes::fwd_and_rev, 1e-5));
  CHECK_NOTHROW(check_grads([](const Array& p, const Array& q) { return special::gammaincc(p, q); },
                            std::make_tuple(a, xs), 1, Modes::fwd_and_rev, 1e-5));
  CHECK_NOTHROW(check_grads([&a](const Array& q) { return special::gammainc(a, q); }, std::make_tuple(xs), 2,
                            Modes::fwd_and_rev, 1e-4));
  CHECK_NOTHROW(check_grads([](const Array& q) { return special::polygamma(2, q); }, std::make_tuple(xs), 2,
                            Modes::fwd_and_rev, 1e-4));
  CHECK_NOTHROW(check_grads([](const Array& q) { return special::zeta(3.5, q); }, std::make_tuple(xs), 2,
                            Modes::fwd_and_rev, 1e-4));
  const Array u = points({0.05, 0.3, 0.5, 0.8, 0.97});
  CHECK_NOTHROW(check_grads([&a](const Array& v) { return special::betainc(a, 2.5, v); }, std::make_tuple(u), 2,
                            Modes::fwd_and_rev, 1e-5));
  CHECK_NOTHROW(check_grads([&](const Array& p, const Array& q) { return special::xlogy(p, q); },
                            std::make_tuple(u, xs), 2, Modes::fwd_and_rev, 1e-4));
  CHECK_NOTHROW(check_grads([&](const Array& p, const Array& q) { return special::xlog1py(p, q); },
                            std::make_tuple(u, xs), 2, Modes::fwd_and_rev, 1e-4));
  CHECK_NOTHROW(check_grads([&](const Array& p, const Array& q) { return logaddexp(p, q); },
                            std::make_tuple(u, xs - 1.0), 2, Modes::fwd_and_rev, 1e-4));

  // The reparameterised gradient of a Gamma(a, 1) sample x: -(dP/da) / (dP/dx).
  const std::vector<double> av = a.to_vector<double>(), xv = xs.to_vector<double>();
  const std::vector<double> rg = prim(ir::Op::random_gamma_grad, {a, xs}).to_vector<double>();
  for (size_t i = 0; i < av.size(); ++i) {
    const double h = 1e-6 * av[i];
    auto p = [&](double aa, double xx) {
      return special::gammainc(scalar(aa, DType::f64), scalar(xx, DType::f64)).item<double>();
    };
    const double dpda = (p(av[i] + h, xv[i]) - p(av[i] - h, xv[i])) / (2 * h);
    const double dpdx = std::exp((av[i] - 1) * std::log(xv[i]) - xv[i] - std::lgamma(av[i]));
    INFO("random_gamma_grad(" << av[i] << ", " << xv[i] << ")");
    CHECK(rg[i] == Approx(-dpda / dpdx).epsilon(1e-6));
  }
}

TEST_CASE("special: derivatives JAX does not define are refused, not zero", "[special][jvp]") {
  const Array n = scalar(1.0, DType::f64), x = scalar(2.0, DType::f64);
  CHECK_THROWS_AS(grad([&x](const Array& m) { return special::polygamma(m, x); })(n), UnsupportedError);
  CHECK_THROWS_AS(grad([&x](const Array& s) { return special::zeta(s, x); })(scalar(3.0, DType::f64)),
                  UnsupportedError);
  CHECK_THROWS_AS(grad([](const Array& a) { return special::betainc(a, 2.0, 0.5); })(x), UnsupportedError);
  CHECK_THROWS_WITH(grad(grad([](const Array& a) { return special::gammainc(a, 1.5); }))(x),
                    Catch::Contains("igamma_grad_a") && Catch::Contains("no derivative"));
}

TEST_CASE("special: values at the points JAX and SciPy document", "[special]") {
  auto f64 = [](double v) { return scalar(v, DType::f64); };
  CHECK(special::i0(f64(1.0)).item<double>() == Approx(1.2660658777520082).epsilon(1e-15));
  CHECK(special::i1(f64(-1.0)).item<double>() == Approx(-0.5651591039924851).epsilon(1e-15));
  CHECK(special::betaln(2.0, f64(3.0)).item<double>() == Approx(std::log(1.0 / 12)).epsilon(1e-15));
  CHECK(special::xlogy(0.0, f64(0.0)).item<double>() == 0.0);
  CHECK(std::isnan(special::xlogy(0.0, f64(NAN)).item<double>()));
  CHECK(special::xlog1py(0.0, f64(-1.0)).item<double>() == 0.0);
  // JAX's rule: d/dx xlogy(x, y) = log(y), also at x = 0.
  CHECK(grad([](const Array& v) { return special::xlogy(v, 2.0); })(f64(0.0)).item<double>() == Approx(std::log(2.0)));
  CHECK(special::entr(f64(0.0)).item<double>() == 0.0);
  CHECK(special::entr(f64(-1.0)).item<double>() == -INFINITY);
  CHECK(special::entr(f64(0.5)).item<double>() == Approx(0.5 * std::log(2.0)));
  CHECK(special::logit(f64(0.5)).item<double>() == 0.0);
  CHECK(grad([](const Array& v) { return special::logit(v); })(f64(0.5)).item<double>() == Approx(4.0));
  CHECK(special::expit(f64(0.0)).item<double>() == 0.5);
  CHECK(special::ndtri(array({0.0, 1.0, 0.5})).to_vector<float>() == std::vector<float>{-INFINITY, INFINITY, 0.0f});
  CHECK(special::digamma(f64(1.0)).item<double>() == Approx(-0.5772156649015329).epsilon(1e-16));
  CHECK(std::isnan(special::digamma(f64(-2.0)).item<double>()));
  CHECK(special::gammaln(f64(0.0)).item<double>() == INFINITY);
  // Integer arguments compute in the default float dtype; numbers take the arrays' dtype.
  CHECK(special::gammaln(array({1, 2, 3})).dtype() == DType::f32);
  CHECK(special::gammainc(array({1.0f}), 2.0).dtype() == DType::f32);
  CHECK(special::gammainc(1.0, 2.0).dtype() == default_float_dtype());
  CHECK(special::polygamma(array({1, 2}), array({0.5, 0.5})).dtype() == DType::f64);
  CHECK(special::polygamma(1, f64(1.0)).item<double>() == Approx(M_PI * M_PI / 6).epsilon(1e-15));
  CHECK(std::isnan(special::polygamma(0.5, f64(1.0)).item<double>()));
  CHECK_THROWS_AS(special::gammainc(array({1.0, 2.0}), array({1.0, 2.0, 3.0})), ShapeError);
}

TEST_CASE("special: vmap of the special functions equals a loop", "[special][vmap]") {
  const Array a = array({0.5, 2.0, 9.0});
  const Array x = array({{0.1, 0.5, 0.9}, {0.2, 0.4, 0.6}});
  auto f = [&a](const Array& row) { return special::betainc(a, 3.0, row) + special::gammainc(a, row * 4.0); };
  const std::vector<double> batched = vmap(f)(x).to_vector<double>();
  std::vector<double> looped;
  for (int64_t i = 0; i < 2; ++i)
    for (double v : f(x[i]).to_vector<double>()) looped.push_back(v);
  CHECK(batched == looped);
}

TEST_CASE("elementwise: the NumPy float helpers", "[api][elementwise]") {
  const Array v = array({NAN, INFINITY, -INFINITY, 1.0f});
  CHECK(isnan(v).to_vector<bool>() == std::vector<bool>{true, false, false, false});
  CHECK(isinf(v).to_vector<bool>() == std::vector<bool>{false, true, true, false});
  CHECK(isposinf(v).to_vector<bool>() == std::vector<bool>{false, true, false, false});
  CHECK(isneginf(v).to_vector<bool>() == std::vector<bool>{false, false, true, false});
  CHECK(isnan(array({1, 2})).to_vector<bool>() == std::vector<bool>{false, false});
  CHECK(nan_to_num(v).to_vector<float>() ==
        std::vector<float>{0.0f, std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(), 1.0f});
  CHECK(nan_to_num(astype(v, DType::f64), 5.0, 7.0, -7.0).to_vector<double>() == std::vector<double>{5, 7, -7, 1});
  CHECK(trunc(array({-1.5, 1.5, -0.0})).to_vector<double>() == std::vector<double>{-1.0, 1.0, -0.0});
  CHECK(std::signbit(trunc(array({-0.5})).to_vector<double>()[0]));
  CHECK(log2(array({8.0, 0.5})).to_vector<double>() == std::vector<double>{3.0, -1.0});
  CHECK(exp2(array({10.0f})).to_vector<float>() == std::vector<float>{1024.0f});
  CHECK(nextafter(array({1.0}), array({2.0})).to_vector<double>()[0] == std::nextafter(1.0, 2.0));
  CHECK(nextafter(array({1.0f}), array({0.0f})).to_vector<float>()[0] == std::nextafter(1.0f, 0.0f));
  // logaddexp: no overflow, infinities handled, JAX's finite derivative at (inf, inf).
  CHECK(logaddexp(array({1000.0}), array({1000.0})).to_vector<double>()[0] == Approx(1000.0 + std::log(2.0)));
  CHECK(logaddexp(array({-INFINITY}), array({-INFINITY})).to_vector<double>()[0] == -INFINITY);
  CHECK(logaddexp(array({-INFINITY}), array({0.0})).to_vector<double>()[0] == 0.0);
  CHECK(std::isnan(logaddexp(array({NAN}), array({0.0})).to_vector<double>()[0]));
  const Array g = grad([](const Array& p) { return sum(logaddexp(p, p)); })(array({INFINITY}));
  CHECK(std::isfinite(g.to_vector<double>()[0]));
  // clamp: lax.clamp's derivative, zero on the bounds.
  const Array cx = array({-1.0, 0.0, 0.5, 1.0, 2.0});
  CHECK(clamp(0.0, cx, 1.0).to_vector<double>() == std::vector<double>{0, 0, 0.5, 1, 1});
  CHECK(grad([](const Array& p) { return sum(clamp(0.0, p, 1.0)); })(cx).to_vector<double>() ==
        std::vector<double>{0, 0, 1, 0, 0});
  CHECK(std::isnan(clamp(0.0, array({NAN}), 1.0).to_vector<double>()[0]));
  CHECK(clamp(array({0}), array({-3, 3, 9}), array({5})).to_vector<int32_t>() == std::vector<int32_t>{0, 3, 5});
}

TEST_CASE("elementwise: reduce_precision rounds as lax.reduce_precision", "[api][elementwise]") {
  const std::vector<float> in = {1.0f,  1.00048828125f, 1.0009765625f, 65504.f, 65520.f,  1e5f,     6.1035e-05f,
                                 3e-5f, 1e-8f,          -0.0f,         NAN,     INFINITY, -3.14159f};
  const Array x = array(in, {static_cast<int64_t>(in.size())});
  // np.asarray(lax.reduce_precision(x, 5, 10)) and (x, 8, 7) with JAX 0.10.2
  const std::vector<float> f16 = {1.0f, 1.0f, 1.0009765625f, 65504.0f, INFINITY, INFINITY,  6.103515625e-05f,
                                  0.0f, 0.0f, -0.0f,         NAN,      INFINITY, -3.140625f};
  const std::vector<float> bf16 = {1.0f,
                                   1.0f,
                                   1.0f,
                                   65536.0f,
                                   65536.0f,
                                   99840.0f,
                                   6.103515625e-05f,
                                   3.0040740966796875e-05f,
                                   1.0011717677116394e-08f,
                                   -0.0f,
                                   NAN,
                                   INFINITY,
                                   -3.140625f};
  auto same = [](const std::vector<float>& a, const std::vector<float>& b) {
    for (size_t i = 0; i < a.size(); ++i)
      if (!(std::bit_cast<uint32_t>(a[i]) == std::bit_cast<uint32_t>(b[i]) || (std::isnan(a[i]) && std::isnan(b[i]))))
        return false;
    return a.size() == b.size();
  };
  CHECK(same(reduce_precision(x, 5, 10).to_vector<float>(), f16));
  CHECK(same(reduce_precision(x, 8, 7).to_vector<float>(), bf16));
  CHECK(same(reduce_precision(array(std::vector<float>{NAN, 1.5f, 3.0f}, {3}), 8, 0).to_vector<float>(),
             {NAN, 2.0f, 2.0f}));
  // in f16's normal range: the C++ _Float16 conversion (round to nearest even), on a dense sweep, f64 too
  std::vector<float> sweep;
  for (float v = 6.2e-5f; v < 65000.f; v *= 1.0009f) sweep.push_back(v);
  const std::vector<float> r =
      reduce_precision(array(sweep, {static_cast<int64_t>(sweep.size())}), 5, 10).to_vector<float>();
  const std::vector<double> r64 =
      reduce_precision(astype(array(sweep, {static_cast<int64_t>(sweep.size())}), DType::f64), 5, 10)
          .to_vector<double>();
  size_t bad = 0;
  for (size_t i = 0; i < sweep.size(); ++i) {
    const float want = static_cast<float>(static_cast<_Float16>(sweep[i]));
    bad += r[i] != want || r64[i] != static_cast<double>(want);
  }
  CHECK(bad == 0);
  // the tangent passes through: grad(sum(reduce_precision(3 v))) = 3, as JAX's (3 is representable)
  CHECK(grad([](const Array& v) { return sum(reduce_precision(v * 3.0f, 5, 10)); })(array({1.0f, 2.0f}))
            .to_vector<float>() == std::vector<float>{3.0f, 3.0f});
  CHECK_THROWS_AS(reduce_precision(array({1, 2}), 5, 10), DTypeError);
}

TEST_CASE("special: derivatives at the kinks of |x| are the functions' own", "[special]") {
  // abs's derivative is +1 at ±0 (JAX's); compositions that use |x| only for range keep their true slope.
  auto d = [](auto f, double x) { return grad(f)(scalar(x, DType::f64)).template item<double>(); };
  CHECK(d([](const Array& a) { return abs(a); }, 0.0) == 1.0);
  CHECK(d([](const Array& a) { return abs(a); }, -0.0) == 1.0);
  CHECK(d([](const Array& a) { return special::i0(a); }, 0.0) == 0.0);  // i0 is even
  CHECK(d([](const Array& a) { return special::i1(a); }, 0.0) == Approx(0.5));
  CHECK(d([](const Array& a) { return logaddexp(a, scalar(1.0, DType::f64)); }, 1.0) == Approx(0.5));
  CHECK(d([](const Array& a) { return nn::softplus(a); }, 0.0) == Approx(0.5));
}
