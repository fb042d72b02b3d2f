// graft's element types and shapes: the vocabulary every other header uses.
#pragma once

#include <complex>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "graft/detail/half_bits.h"

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

// ---- implementation (inline: kernels convert every element through these;
// the bit arithmetic is graft/detail/half_bits.h, which generated kernels share)

inline float16 float16::from_bits(uint16_t b) {
  float16 h;
  h.bits = b;
  return h;
}
inline float16::float16(float value) : bits(half_bits::f16_of_float(value)) {}
inline float16::operator float() const { return half_bits::f16_to_float(bits); }

inline bfloat16 bfloat16::from_bits(uint16_t b) {
  bfloat16 h;
  h.bits = b;
  return h;
}
inline bfloat16::bfloat16(float value) : bits(half_bits::bf16_of_float(value)) {}
inline bfloat16::operator float() const { return half_bits::bf16_to_float(bits); }

}  // namespace graft
