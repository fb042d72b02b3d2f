// DType properties and JAX's type-promotion lattice (weak scalars included).
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "graft/types.h"
#include "ir/op.h"

namespace graft::ir {

inline constexpr int kNumDTypes = 15;

// Every dtype, in the order tests and tables list them.
inline constexpr DType kAllDTypes[kNumDTypes] = {DType::bool_, DType::i8,  DType::i16, DType::i32, DType::i64,
                                                 DType::u8,    DType::u16, DType::u32, DType::u64, DType::f16,
                                                 DType::bf16,  DType::f32, DType::f64, DType::c64, DType::c128};

size_t dtype_size(DType dtype);  // bytes per element (bool is one byte)
bool is_floating(DType dtype);   // a real float: f16, bf16, f32, f64
bool is_half(DType dtype);       // f16 or bf16: stored in 16 bits, computed in f32
bool is_complex(DType dtype);    // c64 or c128
bool is_inexact(DType dtype);    // floating or complex
bool is_integer(DType dtype);    // signed or unsigned, not bool
bool is_signed_integer(DType dtype);
bool is_unsigned_integer(DType dtype);
DType real_dtype(DType dtype);     // c64 -> f32, c128 -> f64, others unchanged
DType complex_dtype(DType dtype);  // f64 -> c128, c128 -> c128, other floats -> c64
std::optional<DType> dtype_from_name(std::string_view name);

// Whether an op whose ops.def `dtypes` column is c accepts operands of d.
bool accepts_dtype(DTypeClass c, DType d);

// A dtype as promotion sees it. A C++ scalar is weakly typed: it takes the
// other operand's dtype (x * 2.0 keeps x's f32) unless that would lose its
// kind (an int array times 2.5 becomes the default float, f32).
struct PromotionType {
  DType dtype;
  bool weak = false;
  bool operator==(const PromotionType&) const = default;
};

// The least upper bound of a and b in JAX's lattice (jax._src.dtypes):
//   bool < i* < {u8, i8};  u8 < {i16, u16};  u16 < {i32, u32};  u32 < {i64, u64};
//   i8 < i16 < i32 < i64;  {u64, i64} < f* < {bf16, f16, c*};  {bf16, f16} < f32;
//   f32 < {f64, c64};  f64 < c128;  c* < c64 < c128,
// where i*, f* and c* are the weak int, float and complex (materialised as
// i32, f32 and c64 with `weak` set). Two strong operands meet at a weak
// kind only in u64 with a signed int: JAX's weak float.
PromotionType promote_types(PromotionType a, PromotionType b);
// The dtype of a binary op on a and b: the join, a weak one as the default dtype of its kind.
DType promote_types(DType a, DType b);

}  // namespace graft::ir
