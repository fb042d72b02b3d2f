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

}  // namespace

TEST_CASE("cuda complex: the device std::complex agrees with the host's", "[cuda][complex]") {
  check_against_std<float>(1);
  check_against_std<double>(2);
}
