// The scalar semantics generated kernels share, whatever they run on: XLA's
// integer division, NaN-propagating max and min, saturating float-to-integer
// conversion, wrapping sums and the reductions' combine steps. Written once
// here and spliced into the CPU prelude (codegen/cpu/prelude.cpp) and the
// CUDA prelude (codegen/cuda/prelude.cpp), which each define GCG_FN (the
// qualifiers of a helper function: `inline`, or `__device__ __forceinline__`),
// GCG_LIBM (how a C library function is named) and the fixed-width integer
// types and limits first.
#include "codegen/scalar_helpers.h"

namespace graft::codegen {

extern const char kScalarHelpers[] = R"(// Type facts (no <type_traits>, no <limits>).
template <class T>
struct gcg_t {
  static constexpr bool fl = false;
};
template <>
struct gcg_t<float> {
  static constexpr bool fl = true;
};
template <>
struct gcg_t<double> {
  static constexpr bool fl = true;
};
template <>
struct gcg_t<int32_t> {
  static constexpr bool fl = false;
  static constexpr int32_t lo = INT32_MIN, hi = INT32_MAX;
};
template <>
struct gcg_t<int64_t> {
  static constexpr bool fl = false;
  static constexpr int64_t lo = INT64_MIN, hi = INT64_MAX;
};
template <>
struct gcg_t<uint32_t> {
  static constexpr bool fl = false;
  static constexpr uint32_t lo = 0, hi = UINT32_MAX;
};
template <class A, class B>
struct gcg_same {
  static constexpr bool value = false;
};
template <class A>
struct gcg_same<A, A> {
  static constexpr bool value = true;
};

// The C library's float functions the elementwise ops call by name
// (GCG_LIBM(f): the compiler's builtin on the CPU, CUDA's math library on a GPU).
GCG_FN float gcg_fabs(float x) { return GCG_LIBM(fabsf)(x); }
GCG_FN double gcg_fabs(double x) { return GCG_LIBM(fabs)(x); }
GCG_FN float gcg_erf(float x) { return GCG_LIBM(erff)(x); }
GCG_FN double gcg_erf(double x) { return GCG_LIBM(erf)(x); }
GCG_FN float gcg_fmod(float x, float y) { return GCG_LIBM(fmodf)(x, y); }
GCG_FN double gcg_fmod(double x, double y) { return GCG_LIBM(fmod)(x, y); }
GCG_FN float gcg_pow(float x, float y) { return GCG_LIBM(powf)(x, y); }
GCG_FN double gcg_pow(double x, double y) { return GCG_LIBM(pow)(x, y); }
GCG_FN float gcg_atan2(float x, float y) { return GCG_LIBM(atan2f)(x, y); }
GCG_FN double gcg_atan2(double x, double y) { return GCG_LIBM(atan2)(x, y); }

// Integer division as XLA: x / 0 = -1, x % 0 = x, INT_MIN / -1 = INT_MIN.
GCG_FN int32_t gcg_int_div(int32_t a, int32_t b) { return b == 0 ? -1 : (a == INT32_MIN && b == -1) ? a : a / b; }
GCG_FN int64_t gcg_int_div(int64_t a, int64_t b) { return b == 0 ? -1 : (a == INT64_MIN && b == -1) ? a : a / b; }
GCG_FN uint32_t gcg_int_div(uint32_t a, uint32_t b) { return b == 0 ? UINT32_MAX : a / b; }
GCG_FN int32_t gcg_int_rem(int32_t a, int32_t b) { return b == 0 ? a : (a == INT32_MIN && b == -1) ? 0 : a % b; }
GCG_FN int64_t gcg_int_rem(int64_t a, int64_t b) { return b == 0 ? a : (a == INT64_MIN && b == -1) ? 0 : a % b; }
GCG_FN uint32_t gcg_int_rem(uint32_t a, uint32_t b) { return b == 0 ? a : a % b; }

// max and min propagate NaN.
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

// Float to integer conversion saturates and maps NaN to 0.
template <class To, class From>
GCG_FN To gcg_convert(From v) {
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

// Reduction steps: acc (+) v. Signed sums wrap.
GCG_FN float gcg_sum(float a, float b) { return a + b; }
GCG_FN double gcg_sum(double a, double b) { return a + b; }
GCG_FN int32_t gcg_sum(int32_t a, int32_t b) { return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b)); }
GCG_FN int64_t gcg_sum(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); }
GCG_FN uint32_t gcg_sum(uint32_t a, uint32_t b) { return a + b; }
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

)";

}  // namespace graft::codegen
