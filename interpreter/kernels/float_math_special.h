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
// erfc, ndtr, log_ndtr (f32): erfc(a) = e^(-a^2) erfcx(a) for a >= 0, with
// (1 + a) erfcx(a) one Chebyshev expansion over all of [0, inf) in
// t = 1 - 6 / (a + 3) (scripts/make_special_coeffs.py: its 20 leading terms,
// within 1.1e-14, plenty for an f32 result),
// and e^(-a^2) Eigen's vectorised f64 exp; erfc(-a) = 2 - erfc(a). ndtr(x)
// is erfc(-x / sqrt 2) / 2; log_ndtr(x) is -z^2 + log(erfcx(z) / 2) for
// z = -x / sqrt 2 > 0 (no underflow, however far the tail) and
// log1p(-erfc(-z) / 2) otherwise. A few f64 ulps, so the f32 result is
// within an ulp of the exact value. f64 keeps the scalar functions.
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

// Elements whose recurrences run together, their terms held in registers.
inline constexpr int64_t kGroup = 8;

template <class T>
using SpecialVec = Eigen::Array<T, Eigen::Dynamic, 1>;

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

// erfcx(a) = e^(a^2) erfc(a) and a^2 for a block of a >= 0 (or NaN).
inline void erfcx_block(const double* a, double* erfcx, double* square) {
  static constexpr double kScaledErfcx[20] = {
      8.654949127746540766e-14,  -3.4008985531041419957e-14, -1.9623983381122843085e-12, -8.0790237728415023165e-13,
      4.6321164315224656145e-11, 3.1644331341059917281e-11,  -1.1966477481246857439e-9,  -2.5183402321363753396e-10,
      3.4038358406645661016e-8,  -4.5804960221250771046e-8,  -9.6768022924061364467e-7,  4.6080561306514574756e-6,
      1.487337202881344605e-5,   -2.6627940185075776875e-4,  1.5054589918591580606e-3,   -4.6675840285747551217e-3,
      4.7292022031601972889e-3,  3.3311418699360436342e-2,   -2.2415380799909320498e-1,  1.5074253489495968212};
  // kGroup elements at a time through the whole recurrence, its terms in
  // registers (a loop over the block per term would load and store them).
  for (int64_t g = 0; g < kSpecialBlock; g += kGroup) {
    double t[kGroup], b0[kGroup] = {}, b1[kGroup] = {}, b2[kGroup] = {};
    for (int64_t j = 0; j < kGroup; ++j) t[j] = 2 * (1 - 6 / (a[g + j] + 3));  // 2t
    for (int k = 0; k < 20; ++k)
      for (int64_t j = 0; j < kGroup; ++j) {
        b2[j] = b1[j];
        b1[j] = b0[j];
        b0[j] = t[j] * b1[j] - b2[j] + kScaledErfcx[k];
      }
    for (int64_t j = 0; j < kGroup; ++j) {
      erfcx[g + j] = 0.5 * (b0[j] - b2[j]) / (1 + a[g + j]);
      square[g + j] = a[g + j] * a[g + j];
    }
  }
}

// Which of erfc(x), ndtr(x) = erfc(-x / sqrt 2) / 2 and log(ndtr(x)) a block computes.
enum class ErfcKind { erfc, ndtr, log_ndtr };

template <ErfcKind K>
void erfc_family_block(const double* x, double* y) {
  alignas(64) double z[kSpecialBlock], a[kSpecialBlock], ex[kSpecialBlock], sq[kSpecialBlock], e[kSpecialBlock];
  for (int64_t i = 0; i < kSpecialBlock; ++i) {
    z[i] = K == ErfcKind::erfc ? x[i] : -x[i] * 0.7071067811865476;  // erfc's argument
    a[i] = std::fabs(z[i]);
  }
  erfcx_block(a, ex, sq);
  Eigen::Map<SpecialVec<double>> E(e, kSpecialBlock);
  E = -Eigen::Map<const SpecialVec<double>>(sq, kSpecialBlock);
  E = E.exp();  // e^(-a^2): 0 (or Eigen's tiny floor) where it underflows, which rounds to 0 in f32
  for (int64_t i = 0; i < kSpecialBlock; ++i) {
    const double r = e[i] * ex[i];                           // erfc(|z|)
    const double c = z[i] >= 0 || z[i] != z[i] ? r : 2 - r;  // erfc(z)
    y[i] = K == ErfcKind::erfc ? c : 0.5 * c;
  }
  if constexpr (K == ErfcKind::log_ndtr) {
    // z > 0: log(erfc(z) / 2) = -z^2 + log(erfcx(z) / 2); else log1p(-erfc(|z|) / 2).
    alignas(64) double lo[kSpecialBlock], hi[kSpecialBlock];
    for (int64_t i = 0; i < kSpecialBlock; ++i) {
      lo[i] = 0.5 * ex[i];
      hi[i] = -0.5 * e[i] * ex[i];
    }
    Eigen::Map<SpecialVec<double>> L(lo, kSpecialBlock), H(hi, kSpecialBlock);
    L = L.log();
    H = H.log1p();
    for (int64_t i = 0; i < kSpecialBlock; ++i) y[i] = z[i] > 0 ? lo[i] - sq[i] : (z[i] != z[i] ? z[i] : hi[i]);
  }
}

template <ErfcKind K, class T>
void erfc_family(const T* x, T* y, int64_t n) {
  if constexpr (sizeof(T) == 8) {
    // f64: the scalar functions, more accurate than this formula.
    for (int64_t i = 0; i < n; ++i)
      y[i] = K == ErfcKind::erfc ? gcg_erfc(x[i]) : K == ErfcKind::ndtr ? gcg_ndtr(x[i]) : gcg_log_ndtr(x[i]);
  } else {
    run_blocks(x, y, n, [](const double* in, double* out) { erfc_family_block<K>(in, out); });
  }
}

}  // namespace
}  // namespace graft::interpreter
