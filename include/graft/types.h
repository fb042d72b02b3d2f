// graft's element types and shapes: the vocabulary every other header uses.
#pragma once

#include <complex>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

namespace graft {

// Every dtype JAX has but the fp8 family. The enumerators' order is part of
// no format (text, JSON and .npy files name dtypes), so new ones may go anywhere.
enum class DType : uint8_t { bool_, i32, i64, u32, f32, f64, i8, i16, u8, u16, u64, f16, bf16, c64, c128 };

inline constexpr DType bool_ = DType::bool_;
inline constexpr DType i8 = DType::i8;
inline constexpr DType i16 = DType::i16;
inline constexpr DType i32 = DType::i32;
inline constexpr DType i64 = DType::i64;
inline constexpr DType u8 = DType::u8;
inline constexpr DType u16 = DType::u16;
inline constexpr DType u32 = DType::u32;
inline constexpr DType u64 = DType::u64;
inline constexpr DType f16 = DType::f16;
inline constexpr DType bf16 = DType::bf16;
inline constexpr DType f32 = DType::f32;
inline constexpr DType f64 = DType::f64;
inline constexpr DType c64 = DType::c64;
inline constexpr DType c128 = DType::c128;

// "bool", "i8", "i16", "i32", "i64", "u8", ..., "f16", "bf16", "f32", "f64", "c64", "c128".
const char* dtype_name(DType dtype);

// The dtype JAX's promotion lattice gives a binary op on a and b (jnp.promote_types).
DType promote_types(DType a, DType b);

using Shape = std::vector<int64_t>;

// IEEE binary16 (f16's element): stored bits, converting to and from float
// with round-to-nearest-even (overflow gives inf, NaN stays NaN).
struct float16 {
  uint16_t bits = 0;
  float16() = default;
  float16(float value);    // NOLINT: implicit, as a float narrows to it
  operator float() const;  // NOLINT: exact
  static float16 from_bits(uint16_t b);
};

// bfloat16 (bf16's element): a float's upper 16 bits, rounded to nearest even.
struct bfloat16 {
  uint16_t bits = 0;
  bfloat16() = default;
  bfloat16(float value);   // NOLINT: implicit, as a float narrows to it
  operator float() const;  // NOLINT: exact
  static bfloat16 from_bits(uint16_t b);
};

// ---- implementation (inline: kernels convert every element through these)

namespace detail {
inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
}  // namespace detail

inline float16 float16::from_bits(uint16_t b) {
  float16 h;
  h.bits = b;
  return h;
}

inline float16::float16(float value) {
  // The exponent is rebiased and the 13 dropped mantissa bits rounded to
  // nearest even by an integer add; subnormal results are rounded by the
  // FPU, adding a magic number that puts their last place at 2^-24.
  uint32_t f = detail::float_bits(value);
  const uint16_t sign = static_cast<uint16_t>((f >> 16) & 0x8000u);
  f &= 0x7fffffffu;
  uint16_t out;
  if (f >= 0x47800000u) {  // >= 65536, inf or NaN (65520 .. 65536 round up below)
    out = f > 0x7f800000u ? static_cast<uint16_t>(0x7e00u | ((f >> 13) & 0x3ffu)) : 0x7c00u;
  } else if (f < 0x38800000u) {                          // below f16's smallest normal, 2^-14
    const float magic = detail::bits_float(126u << 23);  // 0.5: its ulp is 2^-24
    out = static_cast<uint16_t>(detail::float_bits(detail::bits_float(f) + magic) - (126u << 23));
  } else {
    const uint32_t odd = (f >> 13) & 1u;
    f += (static_cast<uint32_t>(15 - 127) << 23) + 0xfffu + odd;
    out = static_cast<uint16_t>(f >> 13);
  }
  bits = static_cast<uint16_t>(out | sign);
}

inline float16::operator float() const {
  const uint32_t exp = bits & 0x7c00u, mant = bits & 0x03ffu;
  uint32_t f;
  if (exp == 0x7c00u) {
    f = 0x7f800000u | (mant << 13);
  } else if (exp == 0) {  // zero or subnormal: mant * 2^-24, exact in float
    const float v = static_cast<float>(mant) * detail::bits_float(103u << 23);
    f = detail::float_bits(v);
  } else {
    f = ((exp >> 10) + 112u) << 23 | (mant << 13);
  }
  return detail::bits_float(f | static_cast<uint32_t>(bits & 0x8000u) << 16);
}

inline bfloat16 bfloat16::from_bits(uint16_t b) {
  bfloat16 h;
  h.bits = b;
  return h;
}

inline bfloat16::bfloat16(float value) {
  const uint32_t f = detail::float_bits(value);
  if ((f & 0x7fffffffu) > 0x7f800000u) {
    bits = static_cast<uint16_t>((f >> 16) | 0x0040u);  // NaN stays NaN (quieted)
  } else {
    bits = static_cast<uint16_t>((f + 0x7fffu + ((f >> 16) & 1u)) >> 16);
  }
}

inline bfloat16::operator float() const { return detail::bits_float(static_cast<uint32_t>(bits) << 16); }

}  // namespace graft
