// The std::complex generated CUDA modules get on the GPU
// (codegen/cuda/complex_device.h), compiled here as host code in a namespace
// of its own and checked against the host's std::complex: the GPU runs this
// text only when one is lent (scripts/gpu_check.sh), and the emulated driver
// computes with <complex> itself, so this is where its formulas are tested.
#include <math.h>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

#include <catch2/catch.hpp>

#define GCG_FN inline
#define GCG_COMPLEX_DEVICE_NS gcg_device_complex
#include "codegen/cuda/complex_device.h"

namespace {

namespace dc = gcg_device_complex;

template <class T>
constexpr T a_value() {
  return T(1.25);
}

template <class T>
void check_against_std(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> mant(-1, 1);
  std::uniform_int_distribution<int> expo(-20, 20);
  auto draw = [&] { return static_cast<T>(std::ldexp(mant(rng), expo(rng))); };
  double worst_div = 0;
  int exact_mul = 0, n = 0;
  for (int i = 0; i < 20000; ++i) {
    const T a = draw(), b = draw(), c = draw(), d = draw();
    const std::complex<T> x(a, b), y(c, d);
    const dc::complex<T> u(a, b), v(c, d);
    ++n;
    const std::complex<T> p = x * y;
    const dc::complex<T> q = u * v;
    exact_mul += p.real() == q.real() && p.imag() == q.imag();
    const std::complex<T> s = x / y;
    const dc::complex<T> t = u / v;
    // Relative to |x / y|: a part much smaller than the other carries the larger's rounding.
    const double scale = std::abs(s);
    const T unit = std::nextafter(static_cast<T>(scale), std::numeric_limits<T>::infinity()) - static_cast<T>(scale);
    worst_div = std::max({worst_div, std::fabs(static_cast<double>(s.real() - t.real())) / unit,
                          std::fabs(static_cast<double>(s.imag() - t.imag())) / unit});
    CHECK(dc::abs(u) == std::abs(x));  // both hypot
    const dc::complex<T> sum = u + v, diff = u - v, neg = -u, cj = dc::conj(u), by = u / c;
    CHECK((sum.real() == (x + y).real() && sum.imag() == (x + y).imag()));
    CHECK((diff.real() == (x - y).real() && diff.imag() == (x - y).imag()));
    CHECK((neg.real() == -a && neg.imag() == -b));
    CHECK((cj.real() == a && cj.imag() == -b));
    CHECK((by.real() == (x / c).real() && by.imag() == (x / c).imag()));
    CHECK((u == u && !(u != u) && (u != v) == (x != y)));
  }
  CHECK(exact_mul == n);  // (ac - bd, ad + bc), as GCC's for finite values
  INFO("worst quotient error " << worst_div << " units of |x / y|");
  CHECK(worst_div <= 4);
  // Smith's algorithm keeps quotients of large and small parts finite where the textbook formula overflows.
  const T big = std::numeric_limits<T>::max() / 4;
  const dc::complex<T> q = dc::complex<T>(big, big) / dc::complex<T>(big, big / 2);
  CHECK(std::isfinite(q.real()));
  CHECK(std::fabs(q.real() - T(1.2)) < T(1e-3));
  CHECK(std::fabs(q.imag() - T(0.4)) < T(1e-3));
  // Layout: two parts, aligned to the pair, as std::complex in memory.
  static_assert(sizeof(dc::complex<T>) == sizeof(std::complex<T>));
  static_assert(alignof(dc::complex<T>) == 2 * sizeof(T));
  const dc::complex<T> pair(a_value<T>(), -a_value<T>());
  std::complex<T> host;
  std::memcpy(static_cast<void*>(&host), &pair, sizeof pair);
  CHECK((host.real() == a_value<T>() && host.imag() == -a_value<T>()));
}

// The worst error of the device function f against the host's g over finite
// arguments (parts in [-6, 6], near 0, near |z| = 1), in units of the last place of |g(z)|.
template <class T, class F, class G>
double worst_ulps(F f, G g, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> wide(-6, 6), narrow(-1e-3, 1e-3), angle(0, 6.283185307179586);
  double worst = 0;
  for (int i = 0; i < 20000; ++i) {
    T x, y;
    if (i % 4 == 1) {
      x = static_cast<T>(narrow(rng));
      y = static_cast<T>(narrow(rng));
    } else if (i % 4 == 2) {  // |z| within 1e-3 of 1
      const double r = 1 + narrow(rng), t = angle(rng);
      x = static_cast<T>(r * std::cos(t));
      y = static_cast<T>(r * std::sin(t));
    } else {
      x = static_cast<T>(wide(rng));
      y = static_cast<T>(wide(rng));
    }
    const std::complex<T> want = g(std::complex<T>(x, y));
    const dc::complex<T> got = f(dc::complex<T>(x, y));
    const T size = std::abs(want);
    if (!std::isfinite(size)) continue;
    const T unit = std::nextafter(size, std::numeric_limits<T>::infinity()) - size;
    const double e = std::max(std::fabs(static_cast<double>(got.real()) - want.real()),
                              std::fabs(static_cast<double>(got.imag()) - want.imag())) /
                     static_cast<double>(unit);
    worst = std::max(worst, e);
  }
  return worst;
}

template <class T>
void check_functions() {
  using C = std::complex<T>;
  using D = dc::complex<T>;
  struct Fn {
    const char* name;
    D (*device)(D);
    C (*host)(C);
  };
  const Fn fns[] = {
      {"exp", [](D z) { return dc::exp(z); }, [](C z) { return std::exp(z); }},
      {"log", [](D z) { return dc::log(z); }, [](C z) { return std::log(z); }},
      {"sqrt", [](D z) { return dc::sqrt(z); }, [](C z) { return std::sqrt(z); }},
      {"sin", [](D z) { return dc::sin(z); }, [](C z) { return std::sin(z); }},
      {"cos", [](D z) { return dc::cos(z); }, [](C z) { return std::cos(z); }},
      {"tan", [](D z) { return dc::tan(z); }, [](C z) { return std::tan(z); }},
      {"sinh", [](D z) { return dc::sinh(z); }, [](C z) { return std::sinh(z); }},
      {"cosh", [](D z) { return dc::cosh(z); }, [](C z) { return std::cosh(z); }},
      {"tanh", [](D z) { return dc::tanh(z); }, [](C z) { return std::tanh(z); }},
  };
  uint64_t seed = 10;
  for (const Fn& fn : fns) {
    const double e = worst_ulps<T>(fn.device, fn.host, ++seed);
    INFO(fn.name << " in " << (sizeof(T) == 4 ? "f32" : "f64") << ": " << e << " ulps of |f(z)|");
    CHECK(e <= 8);
  }
  // Exact cases: a real argument keeps a real result, sqrt of a negative real is imaginary.
  CHECK(dc::exp(D(T(1), T(0))).imag() == T(0));
  CHECK(std::signbit(dc::exp(D(T(1), -T(0))).imag()));
  const D root = dc::sqrt(D(T(-4), T(0)));
  CHECK((root.real() == T(0) && root.imag() == T(2)));
  CHECK(dc::log(D(T(1), T(0))).real() == T(0));
}

}  // namespace

TEST_CASE("cuda complex: the device std::complex agrees with the host's", "[cuda][complex]") {
  check_against_std<float>(1);
  check_against_std<double>(2);
}

TEST_CASE("cuda complex: the device's exp, log, sqrt, circular and hyperbolic functions are within 8 ulps of glibc's",
          "[cuda][complex]") {
  check_functions<float>();
  check_functions<double>();
}
