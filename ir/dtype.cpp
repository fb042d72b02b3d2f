#include "ir/dtype.h"

#include <array>
#include <cstdint>

namespace graft {

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::bool_: return "bool";
    case DType::i32: return "i32";
    case DType::i64: return "i64";
    case DType::u32: return "u32";
    case DType::f32: return "f32";
    case DType::f64: return "f64";
  }
  return "?";
}

namespace ir {

size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::bool_: return 1;
    case DType::i32: case DType::u32: case DType::f32: return 4;
    case DType::i64: case DType::f64: return 8;
  }
  return 0;
}

bool is_floating(DType d) { return d == DType::f32 || d == DType::f64; }
bool is_integer(DType d) { return d == DType::i32 || d == DType::i64 || d == DType::u32; }
bool is_signed_integer(DType d) { return d == DType::i32 || d == DType::i64; }

std::optional<DType> dtype_from_name(std::string_view name) {
  for (DType d : {DType::bool_, DType::i32, DType::i64, DType::u32, DType::f32, DType::f64})
    if (name == dtype_name(d)) return d;
  return std::nullopt;
}

namespace {

// Lattice elements. Each element's mask holds itself and everything above it;
// the join of a and b is the element whose upper set is the intersection.
enum Elem { kBool, kWeakInt, kU32, kI32, kI64, kWeakFloat, kF32, kF64, kNumElems };

constexpr uint32_t bit(Elem e) { return 1u << e; }
constexpr uint32_t kAboveF32 = bit(kF32) | bit(kF64);
constexpr uint32_t kAboveWeakFloat = bit(kWeakFloat) | kAboveF32;
constexpr uint32_t kAboveI64 = bit(kI64) | kAboveWeakFloat;

constexpr std::array<uint32_t, kNumElems> kUpperSet = {
    /*bool*/ bit(kBool) | bit(kWeakInt) | bit(kU32) | bit(kI32) | kAboveI64,
    /*i**/ bit(kWeakInt) | bit(kU32) | bit(kI32) | kAboveI64,
    /*u32*/ bit(kU32) | kAboveI64,
    /*i32*/ bit(kI32) | kAboveI64,
    /*i64*/ kAboveI64,
    /*f**/ kAboveWeakFloat,
    /*f32*/ kAboveF32,
    /*f64*/ bit(kF64),
};

Elem to_elem(PromotionType t) {
  switch (t.dtype) {
    case DType::bool_: return kBool;  // a C++ bool keeps its kind: no weak bool
    case DType::u32: return kU32;
    case DType::i32: return t.weak ? kWeakInt : kI32;
    case DType::i64: return t.weak ? kWeakInt : kI64;
    case DType::f32: return t.weak ? kWeakFloat : kF32;
    case DType::f64: return t.weak ? kWeakFloat : kF64;
  }
  return kBool;
}

PromotionType from_elem(Elem e) {
  switch (e) {
    case kBool: return {DType::bool_, false};
    case kWeakInt: return {DType::i32, true};
    case kU32: return {DType::u32, false};
    case kI32: return {DType::i32, false};
    case kI64: return {DType::i64, false};
    case kWeakFloat: return {DType::f32, true};
    case kF32: return {DType::f32, false};
    case kF64: case kNumElems: break;
  }
  return {DType::f64, false};
}

}  // namespace

PromotionType promote_types(PromotionType a, PromotionType b) {
  uint32_t common = kUpperSet[to_elem(a)] & kUpperSet[to_elem(b)];
  for (int e = 0; e < kNumElems; ++e)
    if (kUpperSet[e] == common) return from_elem(static_cast<Elem>(e));
  return {DType::f64, false};  // unreachable: the lattice is complete
}

bool accepts_dtype(DTypeClass c, DType d) {
  switch (c) {
    case DTypeClass::floats: return is_floating(d);
    case DTypeClass::numbers: return d != DType::bool_;
    case DTypeClass::signed_numbers: return d != DType::bool_ && d != DType::u32;
    case DTypeClass::ints: return !is_floating(d) && d != DType::bool_;
    case DTypeClass::ints_or_bool: return !is_floating(d);
    case DTypeClass::any: return true;
  }
  return false;
}

}  // namespace ir
}  // namespace graft
