// The body of one instruction set's float math table: included once by
// float_math_baseline.cpp, float_math_avx2.cpp and float_math_avx512.cpp,
// each compiled with its own -m flags, after defining
//   GRAFT_FLOAT_ISA        the FloatIsa it is built for
//   GRAFT_FLOAT_ISA_TABLE  the name of the function returning its table
//
// The files instantiate the same Eigen templates with different instruction
// sets. Inline functions are merged across object files by the linker, which
// could hand an AVX-512 instantiation to a baseline caller; so each file
// renames Eigen's namespace (the `Eigen` macro below) and keeps its own code
// in an anonymous namespace. tests/runtime/float_math_test.cpp checks that
// these objects export nothing else that another object could share.
#pragma once

#define Eigen GRAFT_FLOAT_ISA_EIGEN
#include <Eigen/Core>
#include <unsupported/Eigen/SpecialFunctions>

#include <algorithm>
#include <array>
#include <utility>
#include <cmath>
#include <cstring>
#include <limits>

#include "interpreter/kernels/float_math.h"
#include "interpreter/kernels/float_math_f32.h"
// The scalar semantics of the ops, each function static: this file's copies
// are compiled for its instruction set and must not be merged with another's.
#define GCG_FN static inline
#include "interpreter/kernels/scalar_ops.h"
#undef GCG_FN
#include "interpreter/kernels/float_math_special.h"

namespace graft::interpreter {
namespace {

template <class T>
using EVec = Eigen::Array<T, Eigen::Dynamic, 1>;

// The widest packet of any table, in elements: full stretches of it take
// every table's packet path.
template <class T>
inline constexpr int64_t kLanes = 64 / sizeof(T);

// Where Eigen's polynomials leave the function's true value (measured by
// tests/float_math; f32 exp no longer takes Eigen's, see float_math_f32.h):
// exp clamps its argument, so exp(-inf) was 2.9e-39 in f32
// and 5.6e-309 in f64, and subnormal results are wrong; AVX-512's exp
// overflows from 88.38 on (exp(88.7) < FLT_MAX); log reads a subnormal
// input as the smallest normal number. Arguments past the range become 0 or
// inf with a compare; the few in the narrow windows between take the C
// library's function; so do logistic's subnormal results. Each element's
// result depends only on its value.
template <FloatFn F, class T>
void fix_range(const T* x, T* y, int64_t n) {
  constexpr bool f32 = sizeof(T) == 4;
  if constexpr (F == FloatFn::exp || F == FloatFn::expm1) {
    // exp(x) rounds to 0 below `zero` and overflows above `inf`; between the
    // window edges and those, the library's function.
    const T zero = f32 ? T(-104) : T(-746), low = f32 ? T(-87) : T(-708), high = f32 ? T(88) : T(709),
            inf = f32 ? T(89) : T(710);
    // Branch-free, so that it vectorises; the window check is a separate count.
    for (int64_t k = 0; k < n; ++k) {
      const T v = x[k];
      T r = y[k];
      if constexpr (F == FloatFn::exp) r = v < zero ? T(0) : r;
      y[k] = v > inf ? std::numeric_limits<T>::infinity() : r;
    }
    int rare = 0;
    for (int64_t k = 0; k < n; ++k) {
      const T v = x[k];
      int w = (v > high) & (v <= inf);
      if constexpr (F == FloatFn::exp) w |= (v >= zero) & (v < low);
      rare |= w;
    }
    if (rare == 0) return;
    for (int64_t k = 0; k < n; ++k) {
      const T v = x[k];
      if constexpr (F == FloatFn::exp)
        if (v >= zero && v < low) y[k] = std::exp(v);
      if (v > high && v <= inf) y[k] = F == FloatFn::exp ? std::exp(v) : std::expm1(v);
    }
  } else if constexpr (F == FloatFn::logistic) {
    // Below `low`, 1/(1+exp(-x)) is exp(x) to the last bit, and Eigen's
    // formula flushes the subnormal results (logistic(-88.5f) gave 0, not
    // 3.7e-39): those take the library's exp.
    const T low = f32 ? T(-80) : T(-700);
    int rare = 0;
    for (int64_t k = 0; k < n; ++k) rare |= x[k] < low;
    if (rare == 0) return;
    for (int64_t k = 0; k < n; ++k)
      if (x[k] < low) y[k] = std::exp(x[k]);
  } else if constexpr (F == FloatFn::log) {
    int rare = 0;
    for (int64_t k = 0; k < n; ++k) rare |= (x[k] > T(0)) & (x[k] < std::numeric_limits<T>::min());
    if (rare == 0) return;
    for (int64_t k = 0; k < n; ++k)
      if (x[k] > T(0) && x[k] < std::numeric_limits<T>::min()) y[k] = std::log(x[k]);
  }
}

// Runs expr over [0, n) in chunks so that every element takes Eigen's packet
// path: a chunk goes through an aligned buffer, padded with zeros to whole
// packets, unless it is whole packets into an aligned y apart from x. y may
// be x.
template <FloatFn F, class T, class Expr>
void apply(const T* x, T* y, int64_t n, const Expr& expr) {
  constexpr int64_t L = kLanes<T>, kChunk = 16 * L;
  alignas(64) T in[kChunk], out[kChunk];
  for (int64_t done = 0; done < n;) {
    const int64_t len = std::min<int64_t>(n - done, kChunk), padded = (len + L - 1) / L * L;
    const T* src = x + done;
    if (padded != len) {
      std::memcpy(in, src, static_cast<size_t>(len) * sizeof(T));
      for (int64_t k = len; k < padded; ++k) in[k] = T(0);
      src = in;
    }
    // Straight into y when it is aligned, whole packets and apart from x.
    T* const dst = y + done;
    const bool direct = padded == len && reinterpret_cast<uintptr_t>(dst) % 64 == 0 &&
                        (dst + len <= x + done || x + done + len <= dst);
    T* const res = direct ? dst : out;
    Eigen::Map<const EVec<T>> X(src, padded);
    Eigen::Map<EVec<T>, Eigen::Aligned64> Y(res, padded);
    Y = expr(X);
    fix_range<F>(x + done, res, len);
    if (!direct) std::memcpy(dst, out, static_cast<size_t>(len) * sizeof(T));
    done += len;
  }
}

// The vector formula of each VECTOR_MATH op (ops.def), by FloatFn: an Eigen
// array expression in X (the operand) with element type T. sqrt and rsqrt
// are not Eigen's: with EIGEN_FAST_MATH (Eigen's default, kept for its
// vectorised sin, cos and tanh) its f32 sqrt is a reciprocal-square-root
// estimate with one Newton step. These are correctly rounded per element
// (GCC vectorises the loop into sqrtps/sqrtpd).
template <FloatFn F>
struct VectorFormula;  // a missing one is a compile error naming the op
#define GRAFT_VECTOR_FORMULA(name, expr)     \
  template <>                                \
  struct VectorFormula<FloatFn::name> {      \
    template <class T, class A>              \
    static auto eval(const A& X) {           \
      return expr;                           \
    }                                        \
  };
GRAFT_VECTOR_FORMULA(floor, X.floor())
GRAFT_VECTOR_FORMULA(ceil, X.ceil())
GRAFT_VECTOR_FORMULA(round, X.rint())  // half to even, as NumPy
GRAFT_VECTOR_FORMULA(exp, X.exp())
GRAFT_VECTOR_FORMULA(log, X.log())
GRAFT_VECTOR_FORMULA(log1p, X.log1p())
GRAFT_VECTOR_FORMULA(expm1, X.expm1())
GRAFT_VECTOR_FORMULA(sqrt, X.unaryExpr([](T v) { return std::sqrt(v); }))
GRAFT_VECTOR_FORMULA(rsqrt, X.unaryExpr([](T v) { return T(1) / std::sqrt(v); }))
GRAFT_VECTOR_FORMULA(sin, X.sin())
GRAFT_VECTOR_FORMULA(cos, X.cos())
GRAFT_VECTOR_FORMULA(tan, X.tan())
GRAFT_VECTOR_FORMULA(asin, X.asin())
GRAFT_VECTOR_FORMULA(acos, X.acos())
GRAFT_VECTOR_FORMULA(atan, X.atan())
GRAFT_VECTOR_FORMULA(sinh, X.sinh())
GRAFT_VECTOR_FORMULA(cosh, X.cosh())
GRAFT_VECTOR_FORMULA(tanh, X.tanh())
GRAFT_VECTOR_FORMULA(logistic, T(1) / (T(1) + (-X).exp()))
#undef GRAFT_VECTOR_FORMULA

template <FloatFn F, class T>
void vector_fn(const T* x, T* y, int64_t n) {
  apply<F>(x, y, n, [](const auto& X) { return VectorFormula<F>::template eval<T>(X); });
}

// f32 exp, sin and cos are graft's own (float_math_f32.h), not Eigen's.
template <>
void vector_fn<FloatFn::exp, float>(const float* x, float* y, int64_t n) {
  run_f32<ExpF32>(x, y, n);
}
template <>
void vector_fn<FloatFn::sin, float>(const float* x, float* y, int64_t n) {
  run_f32<SinF32<false>>(x, y, n);
}
template <>
void vector_fn<FloatFn::cos, float>(const float* x, float* y, int64_t n) {
  run_f32<SinF32<true>>(x, y, n);
}

// The special functions: float_math_special.h, one function for both dtypes.
#define GRAFT_SPECIAL_VECTOR_FN(name, function)                                  \
  template <>                                                                    \
  void vector_fn<FloatFn::name, float>(const float* x, float* y, int64_t n) {    \
    function(x, y, n);                                                           \
  }                                                                              \
  template <>                                                                    \
  void vector_fn<FloatFn::name, double>(const double* x, double* y, int64_t n) { \
    function(x, y, n);                                                           \
  }
GRAFT_SPECIAL_VECTOR_FN(bessel_i0e, bessel_ie<false>)
GRAFT_SPECIAL_VECTOR_FN(bessel_i1e, bessel_ie<true>)
GRAFT_SPECIAL_VECTOR_FN(erfc, erfc_family<ErfcKind::erfc>)
GRAFT_SPECIAL_VECTOR_FN(ndtr, erfc_family<ErfcKind::ndtr>)
GRAFT_SPECIAL_VECTOR_FN(log_ndtr, erfc_family<ErfcKind::log_ndtr>)
#undef GRAFT_SPECIAL_VECTOR_FN
template <>
void vector_fn<FloatFn::ndtri, float>(const float* x, float* y, int64_t n) {
  run_blocks(x, y, n, [](const double* in, double* out) {
    Eigen::Map<const EVec<double>> P(in, kSpecialBlock);
    Eigen::Map<EVec<double>> Y(out, kSpecialBlock);
    Y = P.ndtri();
    // Eigen's ndtri gives -inf below 0 and inf above 1, where the function is NaN.
    for (int64_t i = 0; i < kSpecialBlock; ++i) out[i] = in[i] < 0 || in[i] > 1 ? in[i] - in[i] + NAN : out[i];
  });
}
template <>
void vector_fn<FloatFn::ndtri, double>(const double* x, double* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = gcg_ndtri_f64(x[i]);
}

template <class T, size_t... I>
constexpr std::array<void (*)(const T*, T*, int64_t), sizeof...(I)> vector_fns(std::index_sequence<I...>) {
  return {&vector_fn<static_cast<FloatFn>(I), T>...};
}

template <class T, FloatArith A>
void arith_fn(const T* a, const T* b, T* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (A == FloatArith::add) y[i] = a[i] + b[i];
    else if constexpr (A == FloatArith::sub) y[i] = a[i] - b[i];
    else if constexpr (A == FloatArith::mul) y[i] = a[i] * b[i];
    else y[i] = a[i] / b[i];
  }
}

}  // namespace

const FloatMathTable& GRAFT_FLOAT_ISA_TABLE() {
  static const FloatMathTable table = [] {
    FloatMathTable t{GRAFT_FLOAT_ISA, {}, {}, {}, {}};
    const auto f32 = vector_fns<float>(std::make_index_sequence<kFloatFnCount>{});
    const auto f64 = vector_fns<double>(std::make_index_sequence<kFloatFnCount>{});
    for (int i = 0; i < kFloatFnCount; ++i) {
      t.f32[i] = f32[i];
      t.f64[i] = f64[i];
    }
    t.arith_f32[0] = &arith_fn<float, FloatArith::add>;
    t.arith_f32[1] = &arith_fn<float, FloatArith::sub>;
    t.arith_f32[2] = &arith_fn<float, FloatArith::mul>;
    t.arith_f32[3] = &arith_fn<float, FloatArith::div>;
    t.arith_f64[0] = &arith_fn<double, FloatArith::add>;
    t.arith_f64[1] = &arith_fn<double, FloatArith::sub>;
    t.arith_f64[2] = &arith_fn<double, FloatArith::mul>;
    t.arith_f64[3] = &arith_fn<double, FloatArith::div>;
    return t;
  }();
  return table;
}

}  // namespace graft::interpreter

#undef Eigen
