// The elementwise ops JAX defines on complex numbers, as the interpreter
// computes them (std::complex, the C library's complex functions; C99
// Annex G's infinities and NaNs). complex_math<op>::defined says whether an
// op has one; ops.def's `dtypes` column lets complex operands reach only
// those that do (INEXACT, ALL_NUMBERS, SIGNED, ANY comparisons).
#pragma once

#include <cmath>
#include <complex>

#include "ir/op.h"

namespace graft::interpreter {

template <ir::Op op>
struct complex_math {
  static constexpr bool defined = false;
};

namespace complex_detail {

// log(1 + z), accurate for small z: the real part is log|1 + z| = log1p(2x + x^2 + y^2) / 2.
template <class T>
std::complex<T> log1p(std::complex<T> z) {
  const T x = z.real(), y = z.imag();
  if (std::abs(x) > T(0.5) || std::abs(y) > T(0.5)) return std::log(T(1) + z);
  return {std::log1p(x * (T(2) + x) + y * y) / T(2), std::atan2(y, T(1) + x)};
}

// exp(z) - 1, accurate for small z: e^x cos y - 1 = expm1(x) cos y - 2 sin^2(y / 2).
template <class T>
std::complex<T> expm1(std::complex<T> z) {
  const T x = z.real(), y = z.imag(), s = std::sin(y / T(2));
  return {std::expm1(x) * std::cos(y) - T(2) * s * s, std::exp(x) * std::sin(y)};
}

}  // namespace complex_detail

#define GRAFT_COMPLEX_OP(ident, ...)               \
  template <>                                      \
  struct complex_math<ir::Op::ident> {             \
    static constexpr bool defined = true;          \
    template <class T>                             \
    static auto apply(T x, [[maybe_unused]] T y) { \
      return __VA_ARGS__;                          \
    }                                              \
    template <class T>                             \
    static auto apply(T x) {                       \
      return apply(x, T(0));                       \
    }                                              \
  };

GRAFT_COMPLEX_OP(neg, -x)
GRAFT_COMPLEX_OP(abs, std::abs(x))
GRAFT_COMPLEX_OP(sign, x == T(0) ? T(0) : x / std::abs(x))
GRAFT_COMPLEX_OP(exp, std::exp(x))
GRAFT_COMPLEX_OP(log, std::log(x))
GRAFT_COMPLEX_OP(log1p, complex_detail::log1p(x))
GRAFT_COMPLEX_OP(expm1, complex_detail::expm1(x))
GRAFT_COMPLEX_OP(sqrt, std::sqrt(x))
GRAFT_COMPLEX_OP(rsqrt, T(1) / std::sqrt(x))
GRAFT_COMPLEX_OP(sin, std::sin(x))
GRAFT_COMPLEX_OP(cos, std::cos(x))
GRAFT_COMPLEX_OP(tan, std::tan(x))
GRAFT_COMPLEX_OP(asin, std::asin(x))
GRAFT_COMPLEX_OP(acos, std::acos(x))
GRAFT_COMPLEX_OP(atan, std::atan(x))
GRAFT_COMPLEX_OP(sinh, std::sinh(x))
GRAFT_COMPLEX_OP(cosh, std::cosh(x))
GRAFT_COMPLEX_OP(tanh, std::tanh(x))
GRAFT_COMPLEX_OP(asinh, std::asinh(x))
GRAFT_COMPLEX_OP(acosh, std::acosh(x))
GRAFT_COMPLEX_OP(atanh, std::atanh(x))
GRAFT_COMPLEX_OP(logistic, T(1) / (T(1) + std::exp(-x)))
GRAFT_COMPLEX_OP(square, x* x)
GRAFT_COMPLEX_OP(reciprocal, T(1) / x)
GRAFT_COMPLEX_OP(add, x + y)
GRAFT_COMPLEX_OP(sub, x - y)
GRAFT_COMPLEX_OP(mul, x* y)
GRAFT_COMPLEX_OP(div, x / y)
GRAFT_COMPLEX_OP(eq, x == y)
GRAFT_COMPLEX_OP(ne, x != y)
GRAFT_COMPLEX_OP(stop_gradient, x)
GRAFT_COMPLEX_OP(copy, x)
#undef GRAFT_COMPLEX_OP

}  // namespace graft::interpreter
