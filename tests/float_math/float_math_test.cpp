// The float math tables (interpreter/kernels/float_math.h): the accuracy of
// every function of every table this CPU runs, in ULPs against a correctly
// rounded reference (double for f32, long double for f64) over the whole
// range, special values exactly; and that a result does not depend on where
// an element lies (packet or tail, aligned or not).
//
// docs/FLOAT_MATH.md lists the measured errors; `graft_tests
// "[.float_math_table]"` prints them from a denser sweep.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "interpreter/kernels/float_math.h"
#include "interpreter/kernels/scalar_ops.h"

using namespace graft::interpreter;

namespace {

// The exact function, in a wider type.
template <class W>
W reference(FloatFn fn, W x) {
  switch (fn) {
    case FloatFn::floor: return std::floor(x);
    case FloatFn::ceil: return std::ceil(x);
    case FloatFn::round: return std::nearbyint(x);
    case FloatFn::sqrt: return std::sqrt(x);
    case FloatFn::rsqrt: return W(1) / std::sqrt(x);
    case FloatFn::exp: return std::exp(x);
    case FloatFn::log: return std::log(x);
    case FloatFn::log1p: return std::log1p(x);
    case FloatFn::expm1: return std::expm1(x);
    case FloatFn::sin: return std::sin(x);
    case FloatFn::cos: return std::cos(x);
    case FloatFn::tan: return std::tan(x);
    case FloatFn::asin: return std::asin(x);
    case FloatFn::acos: return std::acos(x);
    case FloatFn::atan: return std::atan(x);
    case FloatFn::sinh: return std::sinh(x);
    case FloatFn::cosh: return std::cosh(x);
    case FloatFn::tanh: return std::tanh(x);
    case FloatFn::logistic: return W(1) / (W(1) + std::exp(-x));
    // The special functions: the scalar f64 functions every other path computes
    // (tests/special measures those against mpmath).
    case FloatFn::bessel_i0e: return W(gcg_bessel_i0e_f64(static_cast<double>(x)));
    case FloatFn::bessel_i1e: return W(gcg_bessel_i1e_f64(static_cast<double>(x)));
    case FloatFn::ndtri: return W(gcg_ndtri_f64(static_cast<double>(x)));
    case FloatFn::erfc: return W(gcg_erfc(static_cast<double>(x)));
    case FloatFn::ndtr: return W(gcg_ndtr_f64(static_cast<double>(x)));
    case FloatFn::log_ndtr: return W(gcg_log_ndtr_f64(static_cast<double>(x)));
    case FloatFn::count: break;
  }
  return W(0);
}

// |got - want| in units of the last place of T at want (the subnormal spacing
// below T's normal range). A wrong NaN, infinity or sign of infinity counts
// as infinitely wrong.
template <class T, class W>
double ulp_error(T got, W want) {
  if (std::isnan(want)) return std::isnan(got) ? 0 : INFINITY;
  if (std::isnan(got)) return INFINITY;
  const W big = static_cast<W>(std::numeric_limits<T>::max());
  if (std::isinf(want) || std::fabs(want) > big) {
    // Beyond T's range: the right infinity, or T's largest value when want rounds to it.
    const T rounded = static_cast<T>(want);
    return got == rounded ? 0 : INFINITY;
  }
  if (std::isinf(got)) return INFINITY;
  // A result below T's normal range may be flushed to zero, as XLA's CPU backend does.
  if (std::fabs(want) < static_cast<W>(std::numeric_limits<T>::min()) && got == T(0)) return 0;
  const W a = std::fabs(want);
  int e = 0;
  std::frexp(std::max(a, static_cast<W>(std::numeric_limits<T>::min())), &e);
  const W ulp = std::ldexp(W(1), e - std::numeric_limits<T>::digits);
  return static_cast<double>(std::fabs(static_cast<W>(got) - want) / ulp);
}

template <class T>
using Fn = std::conditional_t<std::is_same_v<T, float>, FloatFnF32, FloatFnF64>;

template <class T>
Fn<T> fn_of(const FloatMathTable& t, FloatFn f) {
  if constexpr (std::is_same_v<T, float>) return t.f32[static_cast<int>(f)];
  else return t.f64[static_cast<int>(f)];
}

// Inputs over the whole range: every `stride`-th bit pattern of each sign
// (so every binade, subnormals included), then the special values.
template <class T>
std::vector<T> sweep(uint64_t count) {
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  const Bits top = sizeof(T) == 4 ? Bits(0x7f800000u) : Bits(0x7ff0000000000000ull);  // +inf
  const Bits step = static_cast<Bits>(top / count) | 1;
  std::vector<T> xs;
  for (Bits b = 0; b < top; b += step) {
    T v;
    std::memcpy(&v, &b, sizeof v);
    xs.push_back(v);
    xs.push_back(-v);
  }
  const T inf = std::numeric_limits<T>::infinity();
  for (T v : {T(0), T(-0.0), inf, -inf, std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::min(),
              std::numeric_limits<T>::denorm_min(), std::numeric_limits<T>::max(), -std::numeric_limits<T>::max(),
              T(1), T(-1), T(0.5), T(-0.5), T(2.5), T(-2.5), T(88.72283935546875), T(-87.33654785156250), T(709.782712893384),
              T(1e-8), T(-1e-8), T(3.14159265358979), T(1.5707963267949), T(1e4), T(-1e4), T(1e30), T(-1e30)})
    xs.push_back(v);
  return xs;
}

struct Worst {
  double ulp = 0;
  double at = 0;
};

template <class T>
Worst worst_error(const FloatMathTable& table, FloatFn f, const std::vector<T>& xs) {
  using W = std::conditional_t<std::is_same_v<T, float>, double, long double>;
  std::vector<T> ys(xs.size());
  fn_of<T>(table, f)(xs.data(), ys.data(), static_cast<int64_t>(xs.size()));
  Worst w;
  for (size_t i = 0; i < xs.size(); ++i) {
    double e = ulp_error(ys[i], reference<W>(f, static_cast<W>(xs[i])));
    // A subnormal input may be read as zero (denormals-are-zero), as XLA's CPU backend does.
    if (xs[i] != T(0) && std::fabs(xs[i]) < std::numeric_limits<T>::min())
      e = std::min(e, ulp_error(ys[i], reference<W>(f, std::signbit(xs[i]) ? W(-0.0) : W(0))));
    if (e > w.ulp) w = {e, static_cast<double>(xs[i])};
  }
  return w;
}

// The bounds the tests hold every table to (docs/FLOAT_MATH.md), in ULPs:
// the worst error of any table on the dense sweep of "[.float_math_table]",
// rounded up. f32, f64.
double bound(FloatFn f, bool f64) {
  switch (f) {
    case FloatFn::floor:
    case FloatFn::ceil:
    case FloatFn::round: return 0;     // exact
    case FloatFn::sqrt: return 0.5;    // correctly rounded
    case FloatFn::rsqrt: return 1.5;   // 1 / a correctly rounded sqrt: two roundings
    case FloatFn::exp: return 1.5;
    case FloatFn::log: return f64 ? 1.5 : 1.5;
    case FloatFn::log1p: return 2.5;
    case FloatFn::expm1: return f64 ? 1 : 5;
    case FloatFn::sin:
    case FloatFn::cos: return f64 ? 1 : 2.5;
    case FloatFn::tan: return 1.5;
    case FloatFn::asin:
    case FloatFn::acos:
    case FloatFn::atan: return 1;
    case FloatFn::sinh:
    case FloatFn::cosh: return 2;
    case FloatFn::tanh: return f64 ? 2 : 6;
    case FloatFn::logistic: return f64 ? 2 : 6;
    case FloatFn::bessel_i0e:
    case FloatFn::bessel_i1e: return f64 ? 0 : 0.5;  // the scalar function's bits, rounded once in f32
    case FloatFn::ndtri: return f64 ? 0 : 1;         // f64: the scalar function; f32: Eigen's f64 ndtri, rounded once
    case FloatFn::erfc:
    case FloatFn::ndtr:
    case FloatFn::log_ndtr: return f64 ? 0 : 1;  // f64: the scalar functions; f32: a few f64 ulps, rounded once
    case FloatFn::count: break;
  }
  return 0;
}

template <class T>
void print_table(uint64_t count) {
  std::printf("%-9s", sizeof(T) == 4 ? "f32" : "f64");
  for (const FloatMathTable* t : float_math_tables()) std::printf(" | %-28s", float_isa_name(t->isa));
  std::printf("\n");
  const std::vector<T> xs = sweep<T>(count);
  for (int f = 0; f < kFloatFnCount; ++f) {
    std::printf("%-9s", float_fn_name(static_cast<FloatFn>(f)));
    for (const FloatMathTable* t : float_math_tables()) {
      Worst w = worst_error<T>(*t, static_cast<FloatFn>(f), xs);
      std::printf(" | %8.3g ulp at %-14.7g", w.ulp, w.at);
    }
    std::printf("\n");
  }
}

}  // namespace

TEST_CASE("float math: every table's error is within its bound over the whole range", "[float_math]") {
  const std::vector<float> xf = sweep<float>(1 << 17);
  const std::vector<double> xd = sweep<double>(1 << 15);
  REQUIRE(!float_math_tables().empty());
  for (const FloatMathTable* t : float_math_tables()) {
    for (int f = 0; f < kFloatFnCount; ++f) {
      INFO(float_isa_name(t->isa) << " " << float_fn_name(static_cast<FloatFn>(f)));
      Worst w32 = worst_error<float>(*t, static_cast<FloatFn>(f), xf);
      INFO("f32: " << w32.ulp << " ulp at x = " << w32.at);
      CHECK(w32.ulp <= bound(static_cast<FloatFn>(f), false));
      Worst w64 = worst_error<double>(*t, static_cast<FloatFn>(f), xd);
      INFO("f64: " << w64.ulp << " ulp at x = " << w64.at);
      CHECK(w64.ulp <= bound(static_cast<FloatFn>(f), true));
    }
  }
}

TEST_CASE("float math: a result does not depend on the element's position", "[float_math]") {
  // The same inputs at every offset and length: whole packets, partial ones, misaligned outputs.
  // Every 7th element is one a function's common formula leaves to its edge
  // formula (exp near over- and underflow, sin/cos of large arguments, inf, NaN).
  const float edges[] = {-95.0f, 88.5f, 1e6f, -3e5f, INFINITY, -INFINITY, NAN, -87.0f, 100.0f};
  std::vector<float> base(300);
  for (size_t i = 0; i < base.size(); ++i)
    base[i] = i % 7 == 3 ? edges[(i / 7) % std::size(edges)] : -20.0f + 0.137f * static_cast<float>(i);
  alignas(64) float in[400], out[400], ref[400];
  for (const FloatMathTable* t : float_math_tables()) {
    for (int f = 0; f < kFloatFnCount; ++f) {
      INFO(float_isa_name(t->isa) << " " << float_fn_name(static_cast<FloatFn>(f)));
      FloatFnF32 fn = t->f32[f];
      fn(base.data(), ref, static_cast<int64_t>(base.size()));
      for (int offset : {0, 1, 3, 16, 17}) {
        for (int64_t len : {int64_t{1}, int64_t{15}, int64_t{16}, int64_t{33}, int64_t{300} - offset}) {
          std::memcpy(in + offset, base.data() + offset, static_cast<size_t>(len) * sizeof(float));
          fn(in + offset, out + offset, len);
          CHECK(std::memcmp(out + offset, ref + offset, static_cast<size_t>(len) * sizeof(float)) == 0);
        }
      }
      // In place.
      std::vector<float> inplace = base;
      fn(inplace.data(), inplace.data(), static_cast<int64_t>(inplace.size()));
      CHECK(std::memcmp(inplace.data(), ref, base.size() * sizeof(float)) == 0);
    }
  }
}

TEST_CASE("float math: the widest table this CPU runs is the one in use", "[float_math]") {
  const std::vector<const FloatMathTable*> tables = float_math_tables();
  REQUIRE(!tables.empty());
  CHECK(tables.front()->isa == FloatIsa::baseline);
  if (std::getenv("GRAFT_FLOAT_MATH") == nullptr) CHECK(float_math().isa == tables.back()->isa);
}

TEST_CASE("float math (table): the measured errors", "[.float_math_table]") {
  const char* dense = std::getenv("GRAFT_ULP_SWEEP");
  const uint64_t count = dense ? std::strtoull(dense, nullptr, 10) : (uint64_t{1} << 24);
  print_table<float>(count);
  print_table<double>(count / 16);
}
