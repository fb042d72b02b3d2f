// graft's own f32 exp, sin and cos: the table entries for these three
// (float_math_isa.h), in place of Eigen's, which took about twice as long
// per element on every instruction set (they evaluate two polynomials per
// sine and fix exp's range in extra passes).
//
// Each function is a branch-free formula per element, written once here and
// compiled by each table's file with its own -m flags; GCC vectorises the
// loops (the files build with -fno-trapping-math so the selects if-convert).
// An element's result depends only on its value: the vector body and the
// scalar tail compute the same IEEE operations (fma where the file has FMA,
// separate multiply and add where it has not, never contracted by the
// compiler: -ffp-contract=off). Arguments the fast formula does not cover
// (exp: results near overflow or below the normal range; sin/cos: |x| above
// kSinMax, where the reduction loses bits) are flagged in the same pass and
// recomputed by an exact formula in a second pass, only when a block has one.
//
// Accuracy (tests/float_math, docs/FLOAT_MATH.md): exp about 1 ULP, sin and
// cos about 2 ULP, over the whole range.
//
// Everything is in an anonymous namespace: each table's file gets its own
// copy, compiled for its instruction set (float_math_isa.h says why).
#pragma once

#include <cmath>
#include <cstdint>

namespace graft::interpreter {
namespace {

#ifdef __FMA__
#define GRAFT_F32_FMA(a, b, c) __builtin_fmaf(a, b, c)
#else
#define GRAFT_F32_FMA(a, b, c) ((a) * (b) + (c))
#endif

inline uint32_t f32_bits(float v) { return __builtin_bit_cast(uint32_t, v); }
inline float f32_of_bits(uint32_t v) { return __builtin_bit_cast(float, v); }

// v + kRoundShift - kRoundShift is v rounded to an integer, ties to even, for
// |v| < 2^22; the integer is also in the low bits of v + kRoundShift.
inline constexpr float kRoundShift = 0x1.8p23f;

// ---- exp: x = k ln2 + r, |r| <= ln2/2; e^x = 2^k e^r.

// e^r by its Taylor series to r^7 (error below 0.05 ULP on |r| <= ln2/2);
// ln2 in two parts, the first short enough that k * part is exact.
inline float exp_f32_reduced(float x, int32_t& k) {
  const float t = x * 1.44269504088896341f + kRoundShift;
  const float kf = t - kRoundShift;
  k = static_cast<int32_t>(f32_bits(t) - f32_bits(kRoundShift));
  float r = GRAFT_F32_FMA(kf, -0.693359375f, x);
  r = GRAFT_F32_FMA(kf, 2.12194440e-4f, r);
  float q = GRAFT_F32_FMA(r, 1.0f / 5040, 1.0f / 720);
  q = GRAFT_F32_FMA(q, r, 1.0f / 120);
  q = GRAFT_F32_FMA(q, r, 1.0f / 24);
  q = GRAFT_F32_FMA(q, r, 1.0f / 6);
  q = GRAFT_F32_FMA(q, r, 0.5f);
  return GRAFT_F32_FMA(r * r, q, r) + 1.0f;
}

// Where 2^k e^r is a normal number, so k can be added to its exponent bits.
inline bool exp_f32_common(float x) { return x >= -86.5f && x <= 88.0f; }

inline float exp_f32_common_value(float x) {
  int32_t k;
  const float p = exp_f32_reduced(x, k);
  return f32_of_bits(f32_bits(p) + (static_cast<uint32_t>(k) << 23));
}

// Every other argument (NaN stays NaN): clamped to where the result is 0 or
// inf anyway, then scaled by 2^k in two normal halves, so that a subnormal
// result is rounded once and an overflow gives inf.
inline float exp_f32_edge_value(float x) {
  x = x > 89.0f ? 89.0f : x;
  x = x < -104.0f ? -104.0f : x;
  int32_t k;
  const float p = exp_f32_reduced(x, k);
  const int32_t k1 = k >> 1, k2 = k - k1;
  return p * f32_of_bits(static_cast<uint32_t>(k1 + 127) << 23) * f32_of_bits(static_cast<uint32_t>(k2 + 127) << 23);
}

struct ExpF32 {
  static bool common(float x) { return exp_f32_common(x); }
  static float value(float x) { return exp_f32_common_value(x); }
  static float edge(float x) { return exp_f32_edge_value(x); }
};

// ---- sin and cos: x = q pi + r (cos: (q + 1/2) pi + r), |r| <= pi/2;
// sin x = (-1)^q sin r, cos x = (-1)^(q+1) sin r. One odd polynomial, no
// select between a sine and a cosine polynomial.
#ifdef __FMA__
// pi in three floats, each the largest float below what is left: x - q pi1 is
// exact with an fma for any q this range gives.
inline constexpr float kPi1 = 3.141592502593994f, kPi2 = 1.5099578831723193e-07f, kPi3 = 1.0780605906948477e-14f;
inline constexpr float kSinMax = 1e5f;
#else
// Without fma the parts are short (Cody and Waite) so that q * part is exact,
// which holds the reduction's error down for smaller q only.
inline constexpr float kPi1 = 3.140625f, kPi2 = 9.67502593994140625e-04f, kPi3 = 1.509957990978376432e-07f;
inline constexpr float kSinMax = 100.0f;
#endif
// Every part is positive, so that q = 0 leaves r = x, the sign of a zero included.

template <bool kCos>
inline float sin_f32_value(float x) {
  float q;
  uint32_t odd;  // bit 0: the sign flips
  if constexpr (kCos) {
    const float t = GRAFT_F32_FMA(x, 0.318309886183790672f, -0.5f) + kRoundShift;
    q = t - kRoundShift + 0.5f;
    odd = f32_bits(t) + 1;
  } else {
    const float t = x * 0.318309886183790672f + kRoundShift;
    q = t - kRoundShift;
    odd = f32_bits(t);
  }
  float r = GRAFT_F32_FMA(q, -kPi1, x);
  r = GRAFT_F32_FMA(q, -kPi2, r);
  r = GRAFT_F32_FMA(q, -kPi3, r);
  // sin r by its Taylor series to r^13 (truncation below 0.01 ULP on |r| <= pi/2).
  const float z = r * r;
  float s = GRAFT_F32_FMA(z, 1.0f / 6227020800.0f, -1.0f / 39916800.0f);
  s = GRAFT_F32_FMA(s, z, 1.0f / 362880);
  s = GRAFT_F32_FMA(s, z, -1.0f / 5040);
  s = GRAFT_F32_FMA(s, z, 1.0f / 120);
  s = GRAFT_F32_FMA(s, z, -1.0f / 6);
  s = GRAFT_F32_FMA(s * z, r, r);
  s = r == 0.0f ? r : s;  // -0 + (+0) would lose the sign of sin(-0)
  return f32_of_bits(f32_bits(s) ^ (odd << 31));
}

// |x| > kSinMax, inf and NaN: the C library's double function, rounded.
inline bool sin_f32_common(float x) { return std::fabs(x) <= kSinMax; }

template <bool kCos>
struct SinF32 {
  static bool common(float x) { return sin_f32_common(x); }
  static float value(float x) { return sin_f32_value<kCos>(x); }
  static float edge(float x) {
    const double v = x;
    return static_cast<float>(kCos ? std::cos(v) : std::sin(v));
  }
};

// y[i] = F(x[i]), i < n (y may be x): the common formula for every element,
// then the edge formula for the elements outside F::common, if a block has
// any (the block's arguments are kept aside when y overwrites x).
template <class F>
void run_f32(const float* x, float* y, int64_t n) {
  constexpr int64_t kBlock = 512;
  alignas(64) float kept[kBlock];
  for (int64_t lo = 0; lo < n; lo += kBlock) {
    const int64_t len = n - lo < kBlock ? n - lo : kBlock;
    const float* in = x + lo;
    float* out = y + lo;
    if (in == out) {
      for (int64_t i = 0; i < len; ++i) kept[i] = in[i];
      in = kept;
    }
    int edge = 0;
    for (int64_t i = 0; i < len; ++i) {
      const float v = in[i];
      edge |= !F::common(v);
      out[i] = F::value(v);
    }
    if (edge == 0) continue;
    for (int64_t i = 0; i < len; ++i)
      if (!F::common(in[i])) out[i] = F::edge(in[i]);
  }
}

#undef GRAFT_F32_FMA

}  // namespace
}  // namespace graft::interpreter
