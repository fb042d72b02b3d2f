// Small helpers for writing C++ source text in the CPU code generator.
#pragma once

#include <cstdint>
#include <string>

#include "graft/errors.h"
#include "ir/dtype.h"

namespace graft::codegen::cpu::detail {

// Concatenation without `"literal" + std::string` chains.
template <class... A>
inline std::string cat(const A&... parts) {
  std::string out;
  ((out += parts), ...);
  return out;
}
inline std::string num(int64_t v) { return std::to_string(v); }

// Throws unless s is a C identifier (a kernel's symbol); `emitter` names the
// code generator in the message ("cpu codegen", "cuda codegen").
inline void check_symbol(const std::string& s, const char* emitter) {
  bool ok = !s.empty() && !(s[0] >= '0' && s[0] <= '9');
  for (char ch : s)
    ok = ok && ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_');
  if (!ok) throw Error(cat(emitter, ": '", s, "' is not a C identifier"));
}

[[noreturn]] inline void fail(const std::string& why) { throw UnsupportedError(cat("cpu codegen: ", why)); }

// The C type of d's elements in memory (buffers, kernel parameters): the
// halves as their bits, the complex numbers as std::complex (a CPU module
// that computes on them includes <complex>; CUDA code has none yet).
inline const char* ctype(DType d) {
  switch (d) {
    case DType::bool_: return "bool";
    case DType::i8: return "int8_t";
    case DType::i16: return "int16_t";
    case DType::i32: return "int32_t";
    case DType::i64: return "int64_t";
    case DType::u8: return "uint8_t";
    case DType::u16: return "uint16_t";
    case DType::u32: return "uint32_t";
    case DType::u64: return "uint64_t";
    case DType::f32: return "float";
    case DType::f64: return "double";
    case DType::f16:
    case DType::bf16: return "uint16_t";
    case DType::c64: return "std::complex<float>";
    case DType::c128: return "std::complex<double>";
  }
  throw UnsupportedError(cat("codegen: no generated code for ", dtype_name(d), " elements yet"));
}

// The C type an op computes d's values in: the halves' in float, as JAX's
// CPU backend does, each op's result rounded to the half when stored.
inline const char* compute_ctype(DType d) { return ir::is_half(d) ? "float" : ctype(d); }
inline DType compute_dtype(DType d) { return ir::is_half(d) ? DType::f32 : d; }

// The computed value of a stored element `e` of d, and the stored element
// (rounded to nearest even) of a computed value.
inline std::string load_expr(DType d, const std::string& e) {
  if (d == DType::f16) return cat("graft::half_bits::f16_to_float(", e, ")");
  if (d == DType::bf16) return cat("graft::half_bits::bf16_to_float(", e, ")");
  return e;
}
inline std::string store_expr(DType d, const std::string& e) {
  if (d == DType::f16) return cat("graft::half_bits::f16_of_float(", e, ")");
  if (d == DType::bf16) return cat("graft::half_bits::bf16_of_float(", e, ")");
  return e;
}

// The type integer arithmetic wraps in (signed overflow is undefined in C++;
// 8- and 16-bit operands would be promoted to a signed int).
inline const char* wrap_type(DType d) {
  switch (d) {
    case DType::i8:
    case DType::i16:
    case DType::i32:
    case DType::u8:
    case DType::u16: return "uint32_t";
    case DType::i64: return "uint64_t";
    default: return ctype(d);
  }
}

}  // namespace graft::codegen::cpu::detail
