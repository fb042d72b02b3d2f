#include "ir/dtype.h"

#include <array>
#include <cstdint>

#include "graft/array.h"

namespace graft {

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::bool_: return "bool";
    case DType::i8: return "i8";
    case DType::i16: return "i16";
    case DType::i32: return "i32";
    case DType::i64: return "i64";
    case DType::u8: return "u8";
    case DType::u16: return "u16";
    case DType::u32: return "u32";
    case DType::u64: return "u64";
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::f32: return "f32";
    case DType::f64: return "f64";
    case DType::c64: return "c64";
    case DType::c128: return "c128";
  }
  return "?";
}

DType promote_types(DType a, DType b) { return ir::promote_types(a, b); }

namespace ir {

DType promote_types(DType a, DType b) {
  const PromotionType t = promote_types(PromotionType{a}, PromotionType{b});
  if (!t.weak) return t.dtype;
  // Only u64 with a signed integer meets at the weak float, which
  // jnp.promote_types materialises as float64 with or without x64 (only
  // 53 bits, but no 64-bit integer type holds both ranges).
  return DType::f64;
}

}  // namespace ir

namespace ir {

size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::bool_:
    case DType::i8:
    case DType::u8: return 1;
    case DType::i16:
    case DType::u16:
    case DType::f16:
    case DType::bf16: return 2;
    case DType::i32: case DType::u32: case DType::f32: return 4;
    case DType::i64:
    case DType::u64:
    case DType::f64:
    case DType::c64: return 8;
    case DType::c128: return 16;
  }
  return 0;
}

bool is_floating(DType d) { return d == DType::f16 || d == DType::bf16 || d == DType::f32 || d == DType::f64; }
bool is_half(DType d) { return d == DType::f16 || d == DType::bf16; }
bool is_complex(DType d) { return d == DType::c64 || d == DType::c128; }
bool is_inexact(DType d) { return is_floating(d) || is_complex(d); }
bool is_signed_integer(DType d) { return d == DType::i8 || d == DType::i16 || d == DType::i32 || d == DType::i64; }
bool is_unsigned_integer(DType d) { return d == DType::u8 || d == DType::u16 || d == DType::u32 || d == DType::u64; }
bool is_integer(DType d) { return is_signed_integer(d) || is_unsigned_integer(d); }

DType real_dtype(DType d) {
  if (d == DType::c64) return DType::f32;
  if (d == DType::c128) return DType::f64;
  return d;
}

DType complex_dtype(DType d) { return d == DType::f64 || d == DType::c128 ? DType::c128 : DType::c64; }

std::optional<DType> dtype_from_name(std::string_view name) {
  for (DType d : kAllDTypes)
    if (name == dtype_name(d)) return d;
  return std::nullopt;
}

namespace {

// Lattice elements; the weak kinds i*, f*, c* sit between the strong ones.
enum Elem {
  kBool,
  kWeakInt,
  kU8,
  kU16,
  kU32,
  kU64,
  kI8,
  kI16,
  kI32,
  kI64,
  kWeakFloat,
  kBF16,
  kF16,
  kF32,
  kF64,
  kWeakComplex,
  kC64,
  kC128,
  kNumElems
};

struct Edge {
  Elem lo, hi;
};
constexpr Edge kEdges[] = {
    {kBool, kWeakInt},
    {kWeakInt, kU8},
    {kWeakInt, kI8},
    {kU8, kI16},
    {kU8, kU16},
    {kU16, kI32},
    {kU16, kU32},
    {kU32, kI64},
    {kU32, kU64},
    {kU64, kWeakFloat},
    {kI8, kI16},
    {kI16, kI32},
    {kI32, kI64},
    {kI64, kWeakFloat},
    {kWeakFloat, kBF16},
    {kWeakFloat, kF16},
    {kWeakFloat, kWeakComplex},
    {kBF16, kF32},
    {kF16, kF32},
    {kF32, kF64},
    {kF32, kC64},
    {kF64, kC128},
    {kWeakComplex, kC64},
    {kC64, kC128},
};

// Each element's upper set (itself and everything above it), as a bit mask:
// the transitive closure of the edges.
constexpr std::array<uint32_t, kNumElems> upper_sets() {
  std::array<uint32_t, kNumElems> up{};
  for (int e = 0; e < kNumElems; ++e) up[e] = 1u << e;
  for (int round = 0; round < kNumElems; ++round)
    for (const Edge& edge : kEdges) up[edge.lo] |= up[edge.hi];
  return up;
}
constexpr std::array<uint32_t, kNumElems> kUpperSet = upper_sets();

Elem to_elem(PromotionType t) {
  if (t.weak) {
    if (is_complex(t.dtype)) return kWeakComplex;
    if (is_floating(t.dtype)) return kWeakFloat;
    if (is_integer(t.dtype)) return kWeakInt;
  }
  switch (t.dtype) {
    case DType::bool_: return kBool;  // a C++ bool keeps its kind: no weak bool
    case DType::i8: return kI8;
    case DType::i16: return kI16;
    case DType::i32: return kI32;
    case DType::i64: return kI64;
    case DType::u8: return kU8;
    case DType::u16: return kU16;
    case DType::u32: return kU32;
    case DType::u64: return kU64;
    case DType::f16: return kF16;
    case DType::bf16: return kBF16;
    case DType::f32: return kF32;
    case DType::f64: return kF64;
    case DType::c64: return kC64;
    case DType::c128: return kC128;
  }
  return kBool;
}

constexpr DType kElemDType[kNumElems] = {DType::bool_, DType::i32, DType::u8,  DType::u16, DType::u32, DType::u64,
                                         DType::i8,    DType::i16, DType::i32, DType::i64, DType::f32, DType::bf16,
                                         DType::f16,   DType::f32, DType::f64, DType::c64, DType::c64, DType::c128};

}  // namespace

PromotionType promote_types(PromotionType a, PromotionType b) {
  const uint32_t common = kUpperSet[to_elem(a)] & kUpperSet[to_elem(b)];
  int e = 0;
  while (e < kNumElems && kUpperSet[e] != common) ++e;  // the lattice is complete: some element matches
  const Elem join = static_cast<Elem>(e < kNumElems ? e : kC128);
  return {kElemDType[join], join == kWeakInt || join == kWeakFloat || join == kWeakComplex};
}

bool accepts_dtype(DTypeClass c, DType d) {
  switch (c) {
    case DTypeClass::floats: return is_floating(d);
    case DTypeClass::inexact: return is_inexact(d);
    case DTypeClass::numbers: return d != DType::bool_ && !is_complex(d);
    case DTypeClass::all_numbers: return d != DType::bool_;
    case DTypeClass::signed_numbers: return d != DType::bool_ && !is_unsigned_integer(d);
    case DTypeClass::ints: return is_integer(d);
    case DTypeClass::ints_or_bool: return is_integer(d) || d == DType::bool_;
    case DTypeClass::complex: return is_complex(d);
    case DTypeClass::real: return !is_complex(d);
    case DTypeClass::lapack: return d == DType::f32 || d == DType::f64 || d == DType::c64 || d == DType::c128;
    case DTypeClass::any: return true;
  }
  return false;
}

}  // namespace ir
}  // namespace graft
