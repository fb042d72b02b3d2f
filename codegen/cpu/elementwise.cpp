// The C++ the CPU code generator emits for each elementwise op: a call of
// its scalar function gcg_<ident> (interpreter/kernels/scalar_ops.h, which
// the prelude splices in and the interpreter's kernels call), so generated
// and interpreted results agree bit for bit from one definition. Floats of
// ops whose ops.def `kernel` column says VECTOR_MATH are calls of graft's
// own vectorised functions instead, the interpreter's too
// (interpreter/kernels/float_math.h, compiled by math.cpp); see op_math_fn.
#include "codegen/cpu/elementwise.h"

#include "codegen/cpu/cpp_text.h"
#include "interpreter/kernels/complex_math.h"

namespace graft::codegen::cpu::detail {

using ir::Op;

// a: operand expressions; dt: the operands' dtype (select: the branches').
std::string op_expr(Op op, DType dt, DType out, const std::vector<std::string>& a) {
  const ir::OpInfo& info = ir::op_info(op);
  if (!ir::is_elementwise(op))
    fail(cat(std::string(info.name), " cannot be emitted as an elementwise expression"));
  if (!ir::accepts_dtype(info.dtypes, dt)) fail(cat(std::string(info.name), " has no kernel for ", dtype_name(dt)));
  std::string args;
  for (const std::string& x : a) args = cat(args, args.empty() ? "" : ", ", x);
  // A half is its stored bits between ops, as in the interpreter: an op
  // computes on the operands' floats and rounds its result on store, select
  // and bitcast move bits.
  if (op == Op::select) return cat("gcg_select<", ctype(dt), ">(", args, ")");
  if (op == Op::bitcast_convert_type && (ir::is_complex(dt) || ir::is_complex(out)))
    return cat("gcg_c_bitcast<", ctype(out), ", ", ctype(dt), ">(", args, ")");
  if (op == Op::bitcast_convert_type)
    return cat("gcg_bitcast_convert_type<", ctype(out), ", ", ctype(dt), ">(", args, ")");
  std::string loaded;
  for (const std::string& x : a) loaded = cat(loaded, loaded.empty() ? "" : ", ", load_expr(dt, x));
  const std::string T = compute_ctype(dt);
  // Complex operands or results: complex_ops.h's gcg_c_<ident>.
  if (ir::is_complex(dt) || ir::is_complex(out)) {
    if (op == Op::convert_element_type && out == DType::f16 && dt == DType::c128)
      return cat("graft::half_bits::f16_of_double(gcg_c_convert<double, ", T, ">(", loaded, "))");
    if (op == Op::convert_element_type)
      return store_expr(out, cat("gcg_c_convert<", compute_ctype(out), ", ", T, ">(", loaded, ")"));
    if (op != Op::complex && !interpreter::has_complex_fn(op))
      fail(cat(std::string(info.name), " has no kernel for ", dtype_name(dt)));
    // The transcendental functions (ops.def's VECTOR_MATH ops) call the C
    // library's complex ones. Measured: fused, exp(z) + z ran 2x slower than
    // the interpreter's two kernels (GCC 12 passes the call's operand through
    // the stack, a failed store forward per element), so the fusion pass
    // leaves them out of groups (transforms/fusion.cpp); a body holding one
    // runs on the interpreter.
    if (info.kernel == ir::KernelKind::vector_math)
      fail(cat(std::string(info.name), " of ", dtype_name(dt),
               " calls the C library per element: the interpreter runs it"));
    return cat("gcg_c_", std::string(info.ident), "(", loaded, ")");
  }
  // To a half as interpreter/kernels/convert.h: an f16 from a double rounded once, anything else through float.
  if (op == Op::convert_element_type && out == DType::f16 && dt == DType::f64)
    return cat("graft::half_bits::f16_of_double(", loaded, ")");
  if (op == Op::convert_element_type)
    return store_expr(out, cat("gcg_convert_element_type<", compute_ctype(out), ", ", T, ">(", loaded, ")"));
  if (op == Op::nextafter && ir::is_half(dt))
    return store_expr(out, cat("gcg_nextafter_half<", dt == DType::f16 ? "0" : "1", ">(", loaded, ")"));
  return store_expr(out, cat("gcg_", std::string(info.ident), "<", T, ">(", loaded, ")"));
}

// ---- ops as calls of graft's float math table (math.h)

std::optional<MathFn> op_math_fn(Op op, DType dt) {
  // The halves compute each element with scalar_ops.h's function, as the interpreter does.
  if (!ir::is_floating(dt) || ir::is_half(dt) || ir::op_info(op).kernel != ir::KernelKind::vector_math)
    return std::nullopt;
  return interpreter::float_fn_of(op);
}

std::string op_call(MathFn fn, const std::string& x, const std::string& y, const std::string& n) {
  return cat("gcg_call(", num(static_cast<int>(fn)), ", ", x, ", ", y, ", ", n, ")");
}

}  // namespace graft::codegen::cpu::detail
