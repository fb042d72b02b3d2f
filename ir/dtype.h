// DType properties and JAX's type-promotion lattice (weak scalars included).
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "graft/types.h"
#include "ir/op.h"

namespace graft::ir {

inline constexpr int kNumDTypes = 6;

size_t dtype_size(DType dtype);  // bytes per element (bool is one byte)
bool is_floating(DType dtype);
bool is_integer(DType dtype);    // signed or unsigned, not bool
bool is_signed_integer(DType dtype);
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

// The least upper bound of a and b in JAX's lattice restricted to graft's
// dtypes:  bool < i* < {u32, i32};  u32, i32 < i64 < f* < f32 < f64,
// where i* and f* are the weak int and float (materialised as i32 and f32).
PromotionType promote_types(PromotionType a, PromotionType b);
inline DType promote_types(DType a, DType b) { return promote_types(PromotionType{a}, PromotionType{b}).dtype; }

}  // namespace graft::ir
