// The conversions between float and the 16-bit floats' bits, written once:
// graft::float16 and graft::bfloat16 (graft/types.h) call them, and graft's
// code generators splice this file's text into the CPU and CUDA kernels
// they generate (cmake/EmbedText.cmake), so every backend rounds a half
// as the host does (on the GPU an f16 rounds with the hardware's `cvt`: the
// same bits for every number, but a NaN becomes the canonical 0x7fff). The text compiles as host C++ and as CUDA device
// code without standard headers: whoever embeds it defines
// GRAFT_HALF_EMBEDDED, the fixed-width integer types and GRAFT_HALF_FN (the
// functions' qualifiers) first.
#ifndef GRAFT_DETAIL_HALF_BITS_H
#define GRAFT_DETAIL_HALF_BITS_H

#ifndef GRAFT_HALF_EMBEDDED
#include <cstdint>
#endif
#ifndef GRAFT_HALF_FN
#define GRAFT_HALF_FN inline
#endif

namespace graft {
namespace half_bits {

// A float's bits, and the float of some bits.
GRAFT_HALF_FN uint32_t of_float(float f) {
#if defined(GRAFT_HALF_EMBEDDED) && defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  __builtin_memcpy(&u, &f, 4);
  return u;
#endif
}
GRAFT_HALF_FN float to_float(uint32_t u) {
#if defined(GRAFT_HALF_EMBEDDED) && defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
#endif
}

// IEEE binary16's bits nearest `value` (ties to even; overflow gives inf,
// NaN stays NaN with its payload's top bits). The exponent is rebiased and
// the 13 dropped mantissa bits rounded by an integer add; subnormal results
// are rounded by the FPU, adding a magic number whose last place is 2^-24.
GRAFT_HALF_FN uint16_t f16_of_float(float value) {
#if defined(GRAFT_HALF_EMBEDDED) && \
    defined(__CUDA_ARCH__)  // the GPU's conversion rounds alike (a NaN becomes the canonical 0x7fff)
  uint16_t h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(value));
  return h;
#else
  uint32_t f = of_float(value);
  const uint16_t sign = static_cast<uint16_t>((f >> 16) & 0x8000u);
  f &= 0x7fffffffu;
  uint16_t out;
  if (f >= 0x47800000u) {  // >= 65536, inf or NaN (65520 .. 65536 round up below)
    out = f > 0x7f800000u ? static_cast<uint16_t>(0x7e00u | ((f >> 13) & 0x3ffu)) : static_cast<uint16_t>(0x7c00u);
  } else if (f < 0x38800000u) {                // below f16's smallest normal, 2^-14
    const float magic = to_float(126u << 23);  // 0.5: its ulp is 2^-24
    out = static_cast<uint16_t>(of_float(to_float(f) + magic) - (126u << 23));
  } else {
    const uint32_t odd = (f >> 13) & 1u;
    f += (static_cast<uint32_t>(15 - 127) << 23) + 0xfffu + odd;
    out = static_cast<uint16_t>(f >> 13);
  }
  return static_cast<uint16_t>(out | sign);
#endif
}

// `value` rounded to a float toward zero, its last bit set when that dropped
// anything ("round to odd"). Rounding that float to nearest even at 11 bits
// gives what rounding `value` there directly gives: the float keeps 13 bits
// more, and the set bit stands for whatever was dropped, so a double just
// above a tie is never taken for the tie (rounding to float to nearest first
// would be: 1 + 2^-11 + 2^-30 would become f16's 1, not 1 + 2^-10).
GRAFT_HALF_FN float float_round_to_odd(double value) {
  const float f = static_cast<float>(value);  // to nearest; NaN, inf and exact values are kept
  if (!(f - f == 0.0f) || static_cast<double>(f) == value) return f;
  uint32_t u = of_float(f);
  if (value > 0.0 ? static_cast<double>(f) > value : static_cast<double>(f) < value) u -= 1;  // toward zero
  return to_float(u | 1u);
}

// IEEE binary16's bits nearest a double (ties to even), rounded once, as
// NumPy and XLA convert f64 to f16.
GRAFT_HALF_FN uint16_t f16_of_double(double value) { return f16_of_float(float_round_to_odd(value)); }

// The float of binary16 bits (exact).
GRAFT_HALF_FN float f16_to_float(uint16_t bits) {
#if defined(GRAFT_HALF_EMBEDDED) && defined(__CUDA_ARCH__)  // exact on the GPU too
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(bits));
  return f;
#else
  const uint32_t exp = bits & 0x7c00u, mant = bits & 0x03ffu;
  uint32_t f;
  if (exp == 0x7c00u) {
    f = 0x7f800000u | (mant << 13);
  } else if (exp == 0) {  // zero or subnormal: mant * 2^-24, exact in float
    f = of_float(static_cast<float>(mant) * to_float(103u << 23));
  } else {
    f = ((exp >> 10) + 112u) << 23 | (mant << 13);
  }
  return to_float(f | static_cast<uint32_t>(bits & 0x8000u) << 16);
#endif
}

// bfloat16's bits nearest `value`: the float's upper half, rounded to
// nearest even (NaN stays NaN, quieted).
GRAFT_HALF_FN uint16_t bf16_of_float(float value) {
  const uint32_t f = of_float(value);
  if ((f & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((f >> 16) | 0x0040u);
  return static_cast<uint16_t>((f + 0x7fffu + ((f >> 16) & 1u)) >> 16);
}

// The float of bfloat16 bits (exact).
GRAFT_HALF_FN float bf16_to_float(uint16_t bits) { return to_float(static_cast<uint32_t>(bits) << 16); }

}  // namespace half_bits
}  // namespace graft

#endif  // GRAFT_DETAIL_HALF_BITS_H
