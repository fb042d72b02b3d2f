// The scalar semantics of every elementwise op, written once: gcg_<ident>
// (ir/ops.def's identifier) computes one element. The interpreter's kernels
// call these functions (interpreter/kernels/elementwise.cpp); the CPU and
// CUDA code generators splice this file's text into their modules' preludes
// at build time (cmake/EmbedText.cmake) and emit calls of the same names.
// So XLA's integer division, NaN-propagating max, wrapping integer
// arithmetic and saturating conversion are one definition on every backend.
//
// Ops whose ops.def `kernel` column says VECTOR_MATH have a faster
// vectorised float version on the CPU (interpreter/kernels/float_math.h),
// within the ulps docs/FLOAT_MATH.md lists of the function here; the CUDA
// backend calls the function here, which is CUDA's math library there.
//
// The text compiles as host C++ (the interpreter, the generated CPU modules)
// and as CUDA device code (NVRTC, no standard headers): so no <cmath>,
// <limits> or <type_traits>. Whoever includes it defines first, or takes
// the defaults below:
//   GCG_FN       a helper's qualifiers (`inline`, `__device__ __forceinline__`)
//   GCG_LIBM(f)  the C library function f (`__builtin_f` on the host)
// and the fixed-width integer types with their limits (INT32_MIN, ...).
#ifndef GRAFT_SCALAR_OPS_H
#define GRAFT_SCALAR_OPS_H

#ifndef GRAFT_SCALAR_EMBEDDED
#include <cstdint>
#endif
#ifndef GCG_FN
#define GCG_FN inline
#endif
#ifndef GCG_LIBM
#define GCG_LIBM(f) __builtin_##f
#endif

// ---- type facts: fl (a float type), the integer limits, u (the unsigned
// type signed arithmetic wraps through)
template <class T>
struct gcg_t {
  static constexpr bool fl = false;
};
template <>
struct gcg_t<bool> {
  static constexpr bool fl = false;
  typedef bool u;
};
template <>
struct gcg_t<float> {
  static constexpr bool fl = true;
  typedef float u;
};
template <>
struct gcg_t<double> {
  static constexpr bool fl = true;
  typedef double u;
};
template <>
struct gcg_t<int32_t> {
  static constexpr bool fl = false;
  static constexpr int32_t lo = INT32_MIN, hi = INT32_MAX;
  typedef uint32_t u;
};
template <>
struct gcg_t<int64_t> {
  static constexpr bool fl = false;
  static constexpr int64_t lo = INT64_MIN, hi = INT64_MAX;
  typedef uint64_t u;
};
template <>
struct gcg_t<uint32_t> {
  static constexpr bool fl = false;
  static constexpr uint32_t lo = 0, hi = UINT32_MAX;
  typedef uint32_t u;
};
template <class A, class B>
struct gcg_same {
  static constexpr bool value = false;
};
template <class A>
struct gcg_same<A, A> {
  static constexpr bool value = true;
};

// ---- the C library's float functions, by op: f32 calls the f-suffixed one
#define GCG_LIBM_UNARY(op, fn)                       \
  template <class T>                                 \
  GCG_FN T gcg_##op(T x) {                           \
    if constexpr (gcg_same<T, float>::value)         \
      return GCG_LIBM(fn##f)(x);                     \
    else                                             \
      return GCG_LIBM(fn)(x);                        \
  }
#define GCG_LIBM_BINARY(op, fn)                      \
  template <class T>                                 \
  GCG_FN T gcg_##op(T x, T y) {                      \
    if constexpr (gcg_same<T, float>::value)         \
      return GCG_LIBM(fn##f)(x, y);                  \
    else                                             \
      return GCG_LIBM(fn)(x, y);                     \
  }
GCG_LIBM_UNARY(floor, floor)
GCG_LIBM_UNARY(ceil, ceil)
GCG_LIBM_UNARY(round, rint)  // half to even, as NumPy
GCG_LIBM_UNARY(sqrt, sqrt)
GCG_LIBM_UNARY(exp, exp)
GCG_LIBM_UNARY(log, log)
GCG_LIBM_UNARY(log1p, log1p)
GCG_LIBM_UNARY(expm1, expm1)
GCG_LIBM_UNARY(sin, sin)
GCG_LIBM_UNARY(cos, cos)
GCG_LIBM_UNARY(tan, tan)
GCG_LIBM_UNARY(asin, asin)
GCG_LIBM_UNARY(acos, acos)
GCG_LIBM_UNARY(atan, atan)
GCG_LIBM_UNARY(sinh, sinh)
GCG_LIBM_UNARY(cosh, cosh)
GCG_LIBM_UNARY(tanh, tanh)
GCG_LIBM_UNARY(erf, erf)
GCG_LIBM_UNARY(cbrt, cbrt)
GCG_LIBM_UNARY(fabs, fabs)
GCG_LIBM_BINARY(fmod, fmod)
GCG_LIBM_BINARY(pow, pow)
GCG_LIBM_BINARY(atan2, atan2)
#undef GCG_LIBM_UNARY
#undef GCG_LIBM_BINARY

// rsqrt is one over gcg_sqrt, correctly rounded (a hardware rsqrt is not).
template <class T>
GCG_FN T gcg_rsqrt(T x) {
  return T(1) / gcg_sqrt(x);
}
template <class T>
GCG_FN T gcg_logistic(T x) {
  return T(1) / (T(1) + gcg_exp(-x));
}

// ---- integer arithmetic wraps (two's complement), as XLA's: signed values
// go through their unsigned type, where overflow is defined
template <class T>
GCG_FN T gcg_wrap_add(T a, T b) {
  typedef typename gcg_t<T>::u U;
  return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
}
template <class T>
GCG_FN T gcg_wrap_sub(T a, T b) {
  typedef typename gcg_t<T>::u U;
  return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
}
template <class T>
GCG_FN T gcg_wrap_mul(T a, T b) {
  typedef typename gcg_t<T>::u U;
  return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
}

// Integer division as XLA: x / 0 = -1 (all ones), x % 0 = x, INT_MIN / -1 =
// INT_MIN and INT_MIN % -1 = 0, so no input traps.
template <class T>
GCG_FN T gcg_int_div(T a, T b) {
  if (b == 0) return static_cast<T>(-1);
  if constexpr (gcg_t<T>::lo != 0)
    if (a == gcg_t<T>::lo && b == T(-1)) return a;
  return a / b;
}
template <class T>
GCG_FN T gcg_int_rem(T a, T b) {
  if (b == 0) return a;
  if constexpr (gcg_t<T>::lo != 0)
    if (a == gcg_t<T>::lo && b == T(-1)) return 0;
  return a % b;
}

// ---- unary ops
template <class T>
GCG_FN T gcg_neg(T x) {
  if constexpr (gcg_t<T>::fl) return -x;
  else return gcg_wrap_sub(T(0), x);
}
template <class T>
GCG_FN T gcg_abs(T x) {
  if constexpr (gcg_t<T>::fl) return gcg_fabs(x);
  else return x < 0 ? gcg_wrap_sub(T(0), x) : x;  // abs(INT_MIN) wraps to INT_MIN, as XLA
}
template <class T>
GCG_FN T gcg_sign(T x) {
  if constexpr (gcg_t<T>::fl)
    if (__builtin_isnan(x)) return x;
  return static_cast<T>((x > 0) - (x < 0));
}
template <class T>
GCG_FN T gcg_square(T x) {
  if constexpr (gcg_t<T>::fl) return x * x;
  else return gcg_wrap_mul(x, x);
}
template <class T>
GCG_FN T gcg_reciprocal(T x) {
  if constexpr (gcg_t<T>::fl) return T(1) / x;
  else return gcg_int_div(T(1), x);
}
template <class T>
GCG_FN bool gcg_is_finite(T x) {
  if constexpr (gcg_t<T>::fl) return __builtin_isfinite(x);
  else return true;
}
template <class T>
GCG_FN T gcg_bitwise_not(T x) {
  if constexpr (gcg_same<T, bool>::value) return !x;
  else return static_cast<T>(~x);
}
template <class T>
GCG_FN T gcg_stop_gradient(T x) {
  return x;
}
template <class T>
GCG_FN T gcg_copy(T x) {
  return x;
}

// ---- binary ops
template <class T>
GCG_FN T gcg_add(T a, T b) {
  if constexpr (gcg_t<T>::fl) return a + b;
  else return gcg_wrap_add(a, b);
}
template <class T>
GCG_FN T gcg_sub(T a, T b) {
  if constexpr (gcg_t<T>::fl) return a - b;
  else return gcg_wrap_sub(a, b);
}
template <class T>
GCG_FN T gcg_mul(T a, T b) {
  if constexpr (gcg_t<T>::fl) return a * b;
  else return gcg_wrap_mul(a, b);
}
template <class T>
GCG_FN T gcg_div(T a, T b) {
  if constexpr (gcg_t<T>::fl) return a / b;
  else return gcg_int_div(a, b);
}
template <class T>
GCG_FN T gcg_rem(T a, T b) {
  if constexpr (gcg_t<T>::fl) return gcg_fmod(a, b);
  else return gcg_int_rem(a, b);
}
// max and min propagate NaN, as XLA's.
template <class T>
GCG_FN T gcg_max(T a, T b) {
  if constexpr (gcg_t<T>::fl)
    if (__builtin_isnan(a) || __builtin_isnan(b)) return a + b;
  return a > b ? a : b;
}
template <class T>
GCG_FN T gcg_min(T a, T b) {
  if constexpr (gcg_t<T>::fl)
    if (__builtin_isnan(a) || __builtin_isnan(b)) return a + b;
  return a < b ? a : b;
}
template <class T>
GCG_FN T gcg_bitwise_and(T a, T b) {
  return static_cast<T>(a & b);
}
template <class T>
GCG_FN T gcg_bitwise_or(T a, T b) {
  return static_cast<T>(a | b);
}
template <class T>
GCG_FN T gcg_bitwise_xor(T a, T b) {
  return static_cast<T>(a ^ b);
}

// ---- comparisons
template <class T>
GCG_FN bool gcg_eq(T a, T b) { return a == b; }
template <class T>
GCG_FN bool gcg_ne(T a, T b) { return a != b; }
template <class T>
GCG_FN bool gcg_lt(T a, T b) { return a < b; }
template <class T>
GCG_FN bool gcg_le(T a, T b) { return a <= b; }
template <class T>
GCG_FN bool gcg_gt(T a, T b) { return a > b; }
template <class T>
GCG_FN bool gcg_ge(T a, T b) { return a >= b; }

// ---- select(pred, on_true, on_false) and conversion
template <class T>
GCG_FN T gcg_select(bool p, T a, T b) {
  return p ? a : b;
}
// Float to integer saturates and maps NaN to 0 (C++ leaves both undefined);
// to bool is "not zero".
template <class To, class From>
GCG_FN To gcg_convert_element_type(From v) {
  if constexpr (gcg_same<To, bool>::value) {
    return v != From(0);
  } else if constexpr (gcg_t<From>::fl && !gcg_t<To>::fl) {
    if (__builtin_isnan(v)) return 0;
    if (v <= static_cast<From>(gcg_t<To>::lo)) return gcg_t<To>::lo;
    if (v >= static_cast<From>(gcg_t<To>::hi)) return gcg_t<To>::hi;
    return static_cast<To>(v);
  } else {
    return static_cast<To>(v);
  }
}

// ---- the reductions' combine steps, acc (+) v: sums wrap; max and min keep
// the first NaN
template <class T>
GCG_FN T gcg_sum(T a, T b) {
  return gcg_add(a, b);
}
template <class T>
GCG_FN T gcg_rmax(T acc, T v) {
  if constexpr (gcg_t<T>::fl) {
    if (__builtin_isnan(v) || v > acc) return __builtin_isnan(acc) ? acc : v;
    return acc;
  } else {
    return v > acc ? v : acc;
  }
}
template <class T>
GCG_FN T gcg_rmin(T acc, T v) {
  if constexpr (gcg_t<T>::fl) {
    if (__builtin_isnan(v) || v < acc) return __builtin_isnan(acc) ? acc : v;
    return acc;
  } else {
    return v < acc ? v : acc;
  }
}

#endif  // GRAFT_SCALAR_OPS_H
