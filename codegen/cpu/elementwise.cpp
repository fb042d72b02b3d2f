// The C++ the CPU code generator emits for each elementwise op: a call of
// its scalar function gcg_<ident> (interpreter/kernels/scalar_ops.h, which
// the prelude splices in and the interpreter's kernels call), so generated
// and interpreted results agree bit for bit from one definition. Floats of
// ops whose ops.def `kernel` column says VECTOR_MATH are calls of graft's
// own vectorised functions instead, the interpreter's too
// (interpreter/kernels/float_math.h, compiled by math.cpp); see op_math_fn.
#include "codegen/cpu/elementwise.h"

#include "codegen/cpu/cpp_text.h"

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
  const std::string T = ctype(dt);
  if (op == Op::convert_element_type) return cat("gcg_convert_element_type<", ctype(out), ", ", T, ">(", args, ")");
  if (op == Op::bitcast_convert_type) return cat("gcg_bitcast_convert_type<", ctype(out), ", ", T, ">(", args, ")");
  return cat("gcg_", std::string(info.ident), "<", T, ">(", args, ")");
}

// ---- ops as calls of graft's float math table (math.h)

std::optional<MathFn> op_math_fn(Op op, DType dt) {
  if (!ir::is_floating(dt) || ir::op_info(op).kernel != ir::KernelKind::vector_math) return std::nullopt;
  return interpreter::float_fn_of(op);
}

std::string op_call(MathFn fn, const std::string& x, const std::string& y, const std::string& n) {
  return cat("gcg_call(", num(static_cast<int>(fn)), ", ", x, ", ", y, ", ", n, ")");
}

}  // namespace graft::codegen::cpu::detail
