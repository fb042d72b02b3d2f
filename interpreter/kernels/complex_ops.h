// The elementwise ops JAX defines on complex numbers, one element at a time,
// written once: gcg_c_<ident> (ir/ops.def's identifier). The interpreter's
// kernels call these functions (complex_math.h, elementwise.cpp, convert.h);
// the CPU code generator splices this file's text into the modules of
// kernels that compute on complex values and emits calls of the same names,
// so a fused complex kernel has the interpreter's bits. They are
// std::complex and the C library's complex functions (C99 Annex G's
// infinities and NaNs), with log1p and expm1 kept accurate near 0. (A
// constant 1 is the complex 1 + 0i: 1 + z as a real plus a complex would
// keep the sign of a -0 imaginary part.)
//
// Host C++ only (the CUDA backend runs complex nodes on the host). Whoever
// embeds the text defines GRAFT_COMPLEX_EMBEDDED and includes <complex> and
// scalar_ops.h's text first.
#ifndef GRAFT_COMPLEX_OPS_H
#define GRAFT_COMPLEX_OPS_H

#ifndef GRAFT_COMPLEX_EMBEDDED
#include <cmath>
#include <complex>

#include "interpreter/kernels/scalar_ops.h"
#endif

// The ops with a complex function, by arity.
// clang-format off
#define GCG_COMPLEX_UNARY_OPS(X)                                                                         \
  X(neg) X(abs) X(sign) X(exp) X(log) X(log1p) X(expm1) X(sqrt) X(rsqrt) X(sin) X(cos) X(tan) X(asin) \
  X(acos) X(atan) X(sinh) X(cosh) X(tanh) X(asinh) X(acosh) X(atanh) X(logistic) X(square)            \
  X(reciprocal) X(stop_gradient) X(copy) X(real) X(imag) X(conj)
#define GCG_COMPLEX_BINARY_OPS(X) X(add) X(sub) X(mul) X(div) X(eq) X(ne)
// clang-format on

template <class T>
inline std::complex<T> gcg_c_neg(std::complex<T> x) {
  return -x;
}
template <class T>
inline T gcg_c_abs(std::complex<T> x) {
  return std::abs(x);
}
template <class T>
inline std::complex<T> gcg_c_sign(std::complex<T> x) {
  return x == std::complex<T>(0) ? std::complex<T>(0) : x / std::abs(x);
}
template <class T>
inline std::complex<T> gcg_c_exp(std::complex<T> x) {
  return std::exp(x);
}
template <class T>
inline std::complex<T> gcg_c_log(std::complex<T> x) {
  return std::log(x);
}
// log(1 + z), accurate for small z: the real part is log|1 + z| = log1p(2x + x^2 + y^2) / 2.
template <class T>
inline std::complex<T> gcg_c_log1p(std::complex<T> z) {
  const T x = z.real(), y = z.imag();
  if (std::abs(x) > T(0.5) || std::abs(y) > T(0.5)) return std::log(T(1) + z);
  return {std::log1p(x * (T(2) + x) + y * y) / T(2), std::atan2(y, T(1) + x)};
}
// exp(z) - 1, accurate for small z: e^x cos y - 1 = expm1(x) cos y - 2 sin^2(y / 2).
template <class T>
inline std::complex<T> gcg_c_expm1(std::complex<T> z) {
  const T x = z.real(), y = z.imag(), s = std::sin(y / T(2));
  return {std::expm1(x) * std::cos(y) - T(2) * s * s, std::exp(x) * std::sin(y)};
}
template <class T>
inline std::complex<T> gcg_c_sqrt(std::complex<T> x) {
  return std::sqrt(x);
}
template <class T>
inline std::complex<T> gcg_c_rsqrt(std::complex<T> x) {
  return std::complex<T>(1) / std::sqrt(x);
}
template <class T>
inline std::complex<T> gcg_c_sin(std::complex<T> x) {
  return std::sin(x);
}
template <class T>
inline std::complex<T> gcg_c_cos(std::complex<T> x) {
  return std::cos(x);
}
template <class T>
inline std::complex<T> gcg_c_tan(std::complex<T> x) {
  return std::tan(x);
}
template <class T>
inline std::complex<T> gcg_c_asin(std::complex<T> x) {
  return std::asin(x);
}
template <class T>
inline std::complex<T> gcg_c_acos(std::complex<T> x) {
  return std::acos(x);
}
template <class T>
inline std::complex<T> gcg_c_atan(std::complex<T> x) {
  return std::atan(x);
}
template <class T>
inline std::complex<T> gcg_c_sinh(std::complex<T> x) {
  return std::sinh(x);
}
template <class T>
inline std::complex<T> gcg_c_cosh(std::complex<T> x) {
  return std::cosh(x);
}
template <class T>
inline std::complex<T> gcg_c_tanh(std::complex<T> x) {
  return std::tanh(x);
}
template <class T>
inline std::complex<T> gcg_c_asinh(std::complex<T> x) {
  return std::asinh(x);
}
template <class T>
inline std::complex<T> gcg_c_acosh(std::complex<T> x) {
  return std::acosh(x);
}
template <class T>
inline std::complex<T> gcg_c_atanh(std::complex<T> x) {
  return std::atanh(x);
}
template <class T>
inline std::complex<T> gcg_c_logistic(std::complex<T> x) {
  return std::complex<T>(1) / (std::complex<T>(1) + std::exp(-x));
}
template <class T>
inline std::complex<T> gcg_c_square(std::complex<T> x) {
  return x * x;
}
template <class T>
inline std::complex<T> gcg_c_reciprocal(std::complex<T> x) {
  return std::complex<T>(1) / x;
}
template <class T>
inline std::complex<T> gcg_c_stop_gradient(std::complex<T> x) {
  return x;
}
template <class T>
inline std::complex<T> gcg_c_copy(std::complex<T> x) {
  return x;
}
template <class T>
inline T gcg_c_real(std::complex<T> x) {
  return x.real();
}
template <class T>
inline T gcg_c_imag(std::complex<T> x) {
  return x.imag();
}
template <class T>
inline std::complex<T> gcg_c_conj(std::complex<T> x) {
  return std::conj(x);
}

template <class T>
inline std::complex<T> gcg_c_add(std::complex<T> x, std::complex<T> y) {
  return x + y;
}
template <class T>
inline std::complex<T> gcg_c_sub(std::complex<T> x, std::complex<T> y) {
  return x - y;
}
template <class T>
inline std::complex<T> gcg_c_mul(std::complex<T> x, std::complex<T> y) {
  return x * y;
}
template <class T>
inline std::complex<T> gcg_c_div(std::complex<T> x, std::complex<T> y) {
  return x / y;
}
template <class T>
inline bool gcg_c_eq(std::complex<T> x, std::complex<T> y) {
  return x == y;
}
template <class T>
inline bool gcg_c_ne(std::complex<T> x, std::complex<T> y) {
  return x != y;
}

// complex(re, im): the number of its parts.
template <class T>
inline std::complex<T> gcg_c_complex(T re, T im) {
  return {re, im};
}

// bitcast_convert_type to or from a complex number: its bytes, as another
// type of its width (copied byte by byte: NVRTC has no memcpy builtin; the
// compilers make it one move).
template <class To, class From>
inline To gcg_c_bitcast(From v) {
  static_assert(sizeof(To) == sizeof(From), "bitcast between types of one width");
  To t;
  const unsigned char* from = reinterpret_cast<const unsigned char*>(&v);
  unsigned char* to = reinterpret_cast<unsigned char*>(&t);
  for (int k = 0; k < (int)sizeof(To); ++k) to[k] = from[k];
  return t;
}

// convert_element_type with a complex side (From or To; a half is its
// float): complex to real keeps the real part, as NumPy; to bool is "not
// zero"; real to complex has a zero imaginary part.
template <class C>
struct gcg_c_is {
  static constexpr bool complex = false;
};
template <class T>
struct gcg_c_is<std::complex<T>> {
  static constexpr bool complex = true;
  typedef T part;
};
template <class To, class From>
inline To gcg_c_convert(From v) {
  if constexpr (gcg_c_is<From>::complex) {
    typedef typename gcg_c_is<From>::part F;
    if constexpr (gcg_same<To, bool>::value)
      return v.real() != F(0) || v.imag() != F(0);
    else if constexpr (gcg_c_is<To>::complex)
      return To(static_cast<typename gcg_c_is<To>::part>(v.real()), static_cast<typename gcg_c_is<To>::part>(v.imag()));
    else
      return gcg_convert_element_type<To, F>(v.real());
  } else {
    typedef typename gcg_c_is<To>::part R;
    return To(gcg_convert_element_type<R, From>(v), R(0));
  }
}

#endif  // GRAFT_COMPLEX_OPS_H
