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

#include "graft/detail/half_bits.h"  // embedded modules have its text before this file's
#endif
#ifndef GCG_FN
#define GCG_FN inline
#endif
#ifndef GCG_LIBM
#define GCG_LIBM(f) __builtin_##f
#endif

// ---- type facts: fl (a float type), the integer limits, u (the unsigned
// type of the same width, for bit operations) and w (the unsigned type
// arithmetic wraps through: at least unsigned int, so that 8- and 16-bit
// operands are not promoted to a signed int that overflows)
template <class T>
struct gcg_t {
  static constexpr bool fl = false;
};
template <>
struct gcg_t<bool> {
  static constexpr bool fl = false;
  typedef bool u;
  typedef bool w;
};
template <>
struct gcg_t<float> {
  static constexpr bool fl = true;
  typedef float u;
  typedef float w;
};
template <>
struct gcg_t<double> {
  static constexpr bool fl = true;
  typedef double u;
  typedef double w;
};
#define GCG_INT_FACTS(T, LO, HI, U, W)   \
  template <>                            \
  struct gcg_t<T> {                      \
    static constexpr bool fl = false;    \
    static constexpr T lo = LO, hi = HI; \
    typedef U u;                         \
    typedef W w;                         \
  };
GCG_INT_FACTS(int8_t, INT8_MIN, INT8_MAX, uint8_t, uint32_t)
GCG_INT_FACTS(int16_t, INT16_MIN, INT16_MAX, uint16_t, uint32_t)
GCG_INT_FACTS(int32_t, INT32_MIN, INT32_MAX, uint32_t, uint32_t)
GCG_INT_FACTS(int64_t, INT64_MIN, INT64_MAX, uint64_t, uint64_t)
GCG_INT_FACTS(uint8_t, 0, UINT8_MAX, uint8_t, uint32_t)
GCG_INT_FACTS(uint16_t, 0, UINT16_MAX, uint16_t, uint32_t)
GCG_INT_FACTS(uint32_t, 0, UINT32_MAX, uint32_t, uint32_t)
GCG_INT_FACTS(uint64_t, 0, UINT64_MAX, uint64_t, uint64_t)
#undef GCG_INT_FACTS
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
GCG_LIBM_UNARY(erfc, erfc)
GCG_LIBM_UNARY(exp2, exp2)
GCG_LIBM_UNARY(log2, log2)
GCG_LIBM_UNARY(log10, log10)
GCG_LIBM_UNARY(asinh, asinh)
GCG_LIBM_UNARY(acosh, acosh)
GCG_LIBM_UNARY(atanh, atanh)
GCG_LIBM_UNARY(trunc, trunc)
GCG_LIBM_UNARY(fabs, fabs)
GCG_LIBM_BINARY(fmod, fmod)
GCG_LIBM_BINARY(pow, pow)
GCG_LIBM_BINARY(atan2, atan2)
GCG_LIBM_BINARY(nextafter, nextafter)
#undef GCG_LIBM_UNARY
#undef GCG_LIBM_BINARY

// nextafter in a 16-bit float held as a float (f16: H == 0, bf16: H == 1):
// one step of the half's bits toward y (the float's own next value would
// round back to x).
template <int H>
GCG_FN float gcg_nextafter_half(float x, float y) {
  if (x != x || y != y) return x + y;
  if (x == y) return y;
  uint16_t b = H == 0 ? graft::half_bits::f16_of_float(x) : graft::half_bits::bf16_of_float(x);
  if (x == 0)
    b = static_cast<uint16_t>((y < 0 ? 0x8000u : 0u) | 1u);  // the smallest subnormal toward y
  else
    b = static_cast<uint16_t>((x < y) == (x > 0) ? b + 1 : b - 1);  // away from zero, or toward it
  return H == 0 ? graft::half_bits::f16_to_float(b) : graft::half_bits::bf16_to_float(b);
}

// rsqrt is one over gcg_sqrt, correctly rounded (a hardware rsqrt is not).
template <class T>
GCG_FN T gcg_rsqrt(T x) {
  return T(1) / gcg_sqrt(x);
}
template <class T>
GCG_FN T gcg_logistic(T x) {
  return T(1) / (T(1) + gcg_exp(-x));
}

// +inf of T (no <limits> in this text).
template <class T>
GCG_FN T gcg_infinity() {
  return T(1) / T(0);
}

// a * b + c rounded once.
template <class T>
GCG_FN T gcg_fma(T a, T b, T c) {
  if constexpr (gcg_same<T, float>::value)
    return GCG_LIBM(fmaf)(a, b, c);
  else
    return GCG_LIBM(fma)(a, b, c);
}

// log1p as XLA computes it (its elemental IR emitter): for |x| below
// sqrt(2) - 1, x - x^2/2 + x^3 N(x)/D(x) with Cephes' rational function, its
// Horner steps fused multiply-adds as XLA's CPU code contracts them; above,
// log(1 + x). erf_inv's w comes from this rather than from gcg_log1p, so that
// erf_inv, and with it random::normal, equals JAX's to the last bit in f64
// (XLA's f64 log is the C library's) and within an ulp or two in f32 (XLA's
// f32 log is its own polynomial). It is less accurate than gcg_log1p near
// |x| = 0.41 (up to 14 ulps in f64).
template <class T>
GCG_FN T gcg_xla_log1p(T x) {
  if (!(gcg_fabs(x) < T(0.41421356237309504880))) return gcg_log(T(1) + x);
  const T num[7] = {T(4.5270000862445199635215E-5), T(4.9854102823193375972212E-1), T(6.5787325942061044846969E0),
                    T(2.9911919328553073277375E1),  T(6.0949667980987787057556E1),  T(5.7112963590585538103336E1),
                    T(2.0039553499201281259648E1)};
  const T den[7] = {T(1.),
                    T(1.5062909083469192043167E1),
                    T(8.3047565967967209469434E1),
                    T(2.2176239823732856465394E2),
                    T(3.0909872225312059774938E2),
                    T(2.1642788614495947685003E2),
                    T(6.0118660497603843919306E1)};
  T n = T(0), d = T(0);
  for (int i = 0; i < 7; ++i) {
    n = gcg_fma(n, x, num[i]);
    d = gcg_fma(d, x, den[i]);
  }
  const T x2 = x * x;
  const T cubic = (x * x2) * (n / d);
  return x + gcg_fma(T(-0.5), x2, cubic);
}

// The inverse error function by M. Giles' polynomial approximations in
// w = -log1p(-x^2) ("Approximating the erfinv function", GPU Computing Gems
// Jade Edition, 2011): two branches in f32, three in f64, the ones XLA
// lowers erf_inv to, evaluated as XLA's CPU code evaluates them (w from
// gcg_xla_log1p, each Horner step a fused multiply-add), so that
// random::normal (sqrt(2) erf_inv(u), as jax.random.normal) draws JAX's
// numbers. erf_inv(+-1) = +-inf; NaN beyond.
template <class T>
GCG_FN T gcg_erf_inv(T x) {
  const T w0 = -gcg_xla_log1p(x * -x);
  T p;
  if constexpr (gcg_same<T, float>::value) {
    const bool central = w0 < 5.0f;
    const float w = central ? w0 - 2.5f : gcg_sqrt(w0) - 3.0f;
    const float c[2][9] = {{2.81022636e-08f, 3.43273939e-07f, -3.5233877e-06f, -4.39150654e-06f, 0.00021858087f,
                            -0.00125372503f, -0.00417768164f, 0.246640727f, 1.50140941f},
                           {-0.000200214257f, 0.000100950558f, 0.00134934322f, -0.00367342844f, 0.00573950773f,
                            -0.0076224613f, 0.00943887047f, 1.00167406f, 2.83297682f}};
    const float* k = c[central ? 0 : 1];
    p = k[0];
    for (int i = 1; i < 9; ++i) p = gcg_fma(p, w, k[i]);
  } else {
    const double central[23] = {
        -3.6444120640178196996e-21, -1.685059138182016589e-19,  1.2858480715256400167e-18,  1.115787767802518096e-17,
        -1.333171662854620906e-16,  2.0972767875968561637e-17,  6.6376381343583238325e-15,  -4.0545662729752068639e-14,
        -8.1519341976054721522e-14, 2.6335093153082322977e-12,  -1.2975133253453532498e-11, -5.4154120542946279317e-11,
        1.051212273321532285e-09,   -4.1126339803469836976e-09, -2.9070369957882005086e-08, 4.2347877827932403518e-07,
        -1.3654692000834678645e-06, -1.3882523362786468719e-05, 0.0001867342080340571352,   -0.00074070253416626697512,
        -0.0060336708714301490533,  0.24015818242558961693,     1.6536545626831027356};
    const double middle[19] = {
        2.2137376921775787049e-09,  9.0756561938885390979e-08, -2.7517406297064545428e-07, 1.8239629214389227755e-08,
        1.5027403968909827627e-06,  -4.013867526981545969e-06, 2.9234449089955446044e-06,  1.2475304481671778723e-05,
        -4.7318229009055733981e-05, 6.8284851459573175448e-05, 2.4031110387097893999e-05,  -0.0003550375203628474796,
        0.00095328937973738049703,  -0.0016882755560235047313, 0.0024914420961078508066,   -0.0037512085075692412107,
        0.005370914553590063617,    1.0052589676941592334,     3.0838856104922207635};
    const double tail[17] = {-2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
                             -3.7894654401267369937e-09, 7.6157012080783393804e-09,  -1.4960026627149240478e-08,
                             2.9147953450901080826e-08,  -6.7711997758452339498e-08, 2.2900482228026654717e-07,
                             -9.9298272942317002539e-07, 4.5260625972231537039e-06,  -1.9681778105531670567e-05,
                             7.5995277030017761139e-05,  -0.00021503011930044477347, -0.00013871931833623122026,
                             1.0103004648645343977,      4.8499064014085844221};
    const double* k = w0 < 6.25 ? central : w0 < 16.0 ? middle : tail;
    const int n = w0 < 6.25 ? 23 : w0 < 16.0 ? 19 : 17;
    const double w = w0 < 6.25 ? w0 - 3.125 : gcg_sqrt(w0) - (w0 < 16.0 ? 3.25 : 5.0);
    p = k[0];
    for (int i = 1; i < n; ++i) p = gcg_fma(p, w, k[i]);
  }
  return gcg_fabs(x) == T(1) ? x * gcg_infinity<T>() : p * x;
}

// ---- integer arithmetic wraps (two's complement), as XLA's: signed values
// go through their unsigned type, where overflow is defined
template <class T>
GCG_FN T gcg_wrap_add(T a, T b) {
  typedef typename gcg_t<T>::w U;
  return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
}
template <class T>
GCG_FN T gcg_wrap_sub(T a, T b) {
  typedef typename gcg_t<T>::w U;
  return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
}
template <class T>
GCG_FN T gcg_wrap_mul(T a, T b) {
  typedef typename gcg_t<T>::w U;
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
template <class T>
GCG_FN T gcg_checkpoint_name(T x) {
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
// max and min propagate NaN, and order -0 below +0 (IEEE 754-2019's
// maximum and minimum, as XLA's): equal zeros meet at a + b for max (+0
// unless both are -0) and at -(-a - b) for min (-0 unless both are +0).
template <class T>
GCG_FN T gcg_max(T a, T b) {
  if constexpr (gcg_t<T>::fl) {
    if (__builtin_isnan(a) || __builtin_isnan(b)) return a + b;
    if (a == b && a == T(0)) return a + b;
  }
  return a > b ? a : b;
}
template <class T>
GCG_FN T gcg_min(T a, T b) {
  if constexpr (gcg_t<T>::fl) {
    if (__builtin_isnan(a) || __builtin_isnan(b)) return a + b;
    if (a == b && a == T(0)) return -(-a - b);
  }
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
// Shifts as XLA's: the amount is read as unsigned, so a negative amount is
// out of range too; out of range, a left or logical right shift gives 0 and
// an arithmetic right shift the sign (0 or -1).
template <class T>
GCG_FN T gcg_shift_left(T x, T amount) {
  typedef typename gcg_t<T>::u U;
  if (static_cast<U>(amount) >= U(sizeof(T) * 8)) return T(0);
  return static_cast<T>(static_cast<U>(x) << static_cast<U>(amount));
}
template <class T>
GCG_FN T gcg_shift_right_logical(T x, T amount) {
  typedef typename gcg_t<T>::u U;
  if (static_cast<U>(amount) >= U(sizeof(T) * 8)) return T(0);
  return static_cast<T>(static_cast<U>(x) >> static_cast<U>(amount));
}
// The top bit is the sign whatever the type (XLA's, also for unsigned types).
template <class T>
GCG_FN T gcg_shift_right_arithmetic(T x, T amount) {
  typedef typename gcg_t<T>::u U;
  const U bits = U(sizeof(T) * 8);
  const U a = static_cast<U>(amount) >= bits ? bits - U(1) : static_cast<U>(amount);
  const U u = static_cast<U>(x);
  if (!((u >> (bits - U(1))) & U(1))) return static_cast<T>(u >> a);
  // Ones shifted in. (Each ~ is cast back to U: 8- and 16-bit values are promoted to int.)
  return static_cast<T>(static_cast<U>(~static_cast<U>(static_cast<U>(~u) >> a)));
}
// The number of set bits (a loop compilers turn into a popcount instruction).
template <class T>
GCG_FN T gcg_population_count(T x) {
  typedef typename gcg_t<T>::u U;
  U u = static_cast<U>(x);
  T count = 0;
  while (u) {
    u &= u - U(1);
    ++count;
  }
  return count;
}
// The number of leading zero bits; the width for 0.
template <class T>
GCG_FN T gcg_clz(T x) {
  typedef typename gcg_t<T>::u U;
  U u = static_cast<U>(x);
  T count = 0;
  for (U top = U(1) << (sizeof(T) * 8 - 1); top && !(u & top); top >>= 1) ++count;
  return count;
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

// The same bits read as To, a type of From's width.
template <class To, class From>
GCG_FN To gcg_bitcast_convert_type(From v) {
  static_assert(sizeof(To) == sizeof(From), "bitcast between types of one width");
  union {
    From from;
    To to;
  } u;
  u.from = v;
  return u.to;
}

// ---- the reductions' combine steps, acc (+) v: sums wrap; max and min keep
// the first NaN
template <class T>
GCG_FN T gcg_sum(T a, T b) {
  return gcg_add(a, b);
}
// (and order -0 below +0, as gcg_max and gcg_min)
template <class T>
GCG_FN T gcg_rmax(T acc, T v) {
  if constexpr (gcg_t<T>::fl) {
    if (__builtin_isnan(v) || v > acc) return __builtin_isnan(acc) ? acc : v;
    if (v == acc && v == T(0)) return acc + v;
    return acc;
  } else {
    return v > acc ? v : acc;
  }
}
template <class T>
GCG_FN T gcg_rmin(T acc, T v) {
  if constexpr (gcg_t<T>::fl) {
    if (__builtin_isnan(v) || v < acc) return __builtin_isnan(acc) ? acc : v;
    if (v == acc && v == T(0)) return -(-acc - v);
    return acc;
  } else {
    return v < acc ? v : acc;
  }
}

// The special functions (digamma, igamma, betainc, ...): their own file,
// spliced in after this one (codegen/embedded_text.cpp).
#ifndef GRAFT_SCALAR_EMBEDDED
#include "interpreter/kernels/special_functions.h"
#endif

#endif  // GRAFT_SCALAR_OPS_H
