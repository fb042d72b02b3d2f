// The special functions of the float math tables (float_math_isa.h):
// vectorised versions of special_functions.h's, in f64 for f32 and f64
// operands alike (an f32 result is the f64 one rounded once, as there).
//
// bessel_i0e, bessel_i1e: special_functions.h's Chebyshev recurrence on its
// coefficients (GCG_I0E_NEAR, ...), run across a block of elements at once:
// each element picks its interval's coefficients (the shorter series padded
// with leading zeros, which leave the recurrence exactly as it was), so one
// loop serves both intervals and GCC vectorises it. The operations are the
// scalar function's, in its order and uncontracted (-ffp-contract=off), so
// the results are the scalar function's bits on every table.
//
// ndtri: f32 through Eigen's vectorised f64 ndtri (Cephes' rational
// approximations, within a few f64 ulps), rounded once to f32: within an
// f32 ulp of the exact value. f64 keeps special_functions.h's scalar
// function (Newton-refined, more accurate than Eigen's f64).
//
// Each table's file includes this after scalar_ops.h with GCG_FN static, so
// its copies of the scalar functions stay its own (float_math_isa.h says why).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace graft::interpreter {
namespace {

// Elements per block: whole vectors of every table, so no element takes a
// scalar tail (which could differ from the vector body).
inline constexpr int64_t kSpecialBlock = 64;

// y[i] = f(x[i]) over [0, n) in blocks of kSpecialBlock padded with zeros,
// block(in, out) computing a whole block of doubles.
template <class T, class Block>
void run_blocks(const T* x, T* y, int64_t n, const Block& block) {
  alignas(64) double in[kSpecialBlock], out[kSpecialBlock];
  for (int64_t lo = 0; lo < n; lo += kSpecialBlock) {
    const int64_t len = n - lo < kSpecialBlock ? n - lo : kSpecialBlock;
    for (int64_t i = 0; i < kSpecialBlock; ++i) in[i] = i < len ? static_cast<double>(x[lo + i]) : 0.0;
    block(in, out);
    for (int64_t i = 0; i < len; ++i) y[lo + i] = static_cast<T>(out[i]);
  }
}

// e^-|x| I0(x) (I1 = false) or e^-|x| I1(x) on one block.
template <bool I1>
void bessel_ie_block(const double* x, double* y) {
  // Both series at 31 terms, highest degree first.
  static constexpr double kNear[31] = {GCG_I0E_NEAR};
  static constexpr double kNear1[31] = {0, GCG_I1E_NEAR};
  static constexpr double kFar[31] = {0, 0, GCG_I0E_FAR};
  static constexpr double kFar1[31] = {0, 0, GCG_I1E_FAR};
  const double* near = I1 ? kNear1 : kNear;
  const double* far = I1 ? kFar1 : kFar;
  alignas(64) double t[kSpecialBlock], b0[kSpecialBlock], b1[kSpecialBlock], b2[kSpecialBlock];
  alignas(64) int64_t is_near[kSpecialBlock];
  for (int64_t i = 0; i < kSpecialBlock; ++i) {
    const double z = std::fabs(x[i]);
    is_near[i] = z <= 8;
    t[i] = z <= 8 ? z / 4 - 1 : 16 / z - 1;
    b0[i] = b1[i] = b2[i] = 0;
  }
  for (int k = 0; k < 31; ++k) {
    const double cn = near[k], cf = far[k];
    for (int64_t i = 0; i < kSpecialBlock; ++i) {
      b2[i] = b1[i];
      b1[i] = b0[i];
      b0[i] = 2 * t[i] * b1[i] - b2[i] + (is_near[i] ? cn : cf);
    }
  }
  for (int64_t i = 0; i < kSpecialBlock; ++i) {
    const double z = std::fabs(x[i]);
    const double s = 0.5 * (b0[i] - b2[i]);
    double r = is_near[i] ? (I1 ? z * s : s) : s / std::sqrt(z);
    if (I1) r = x[i] < 0 ? -r : (x[i] == 0 ? x[i] : r);
    y[i] = r;
  }
}

template <bool I1, class T>
void bessel_ie(const T* x, T* y, int64_t n) {
  run_blocks(x, y, n, [](const double* in, double* out) { bessel_ie_block<I1>(in, out); });
}

}  // namespace
}  // namespace graft::interpreter
