// The C++ the CPU code generator emits for each elementwise op, by op name:
// the interpreter's formulas (interpreter/kernels/elementwise.cpp), bit for
// bit. Ops the interpreter computes with Eigen (exp, log, tanh, ...) are calls
// of graft's own functions, expanded from the same expressions
// (interpreter/kernels/float_math.h, compiled by math.cpp); see op_math_fn.
#include "codegen/cpu/elementwise.h"

#include "codegen/cpu/cpp_text.h"

namespace graft::codegen::cpu::detail {

using ir::Op;

// ---- ops as C++ expressions (the interpreter's formulas)

// a: operand expressions; dt: the operands' dtype (select: the branches').
std::string op_expr(Op op, DType dt, DType out, const std::vector<std::string>& a) {
  const bool fl = ir::is_floating(dt);
  const std::string T = ctype(dt), U = wrap_type(dt);
  auto wrap2 = [&](const char* sym) { return cat("(", T, ")((", U, ")", a[0], " ", sym, " (", U, ")", a[1], ")"); };
  auto bad = [&]() -> std::string {
    fail(cat(std::string(ir::op_name(op)), " has no kernel for ", dtype_name(dt)));
  };
  switch (op) {
    case Op::neg: return fl ? cat("(-", a[0], ")") : cat("(", T, ")((", U, ")0 - (", U, ")", a[0], ")");
    case Op::abs:
      if (fl) return cat("gcg_fabs(", a[0], ")");
      if (dt == DType::i32 || dt == DType::i64)
        return cat("(", a[0], " < 0 ? (", T, ")((", U, ")0 - (", U, ")", a[0], ") : ", a[0], ")");
      return bad();
    case Op::sign:
      if (fl) return cat("(__builtin_isnan(", a[0], ") ? ", a[0], " : (", T, ")((", a[0], " > 0) - (", a[0], " < 0)))");
      if (dt == DType::bool_) return bad();
      return cat("(", T, ")((", a[0], " > 0) - (", a[0], " < 0))");
    case Op::square:
      if (dt == DType::bool_) return bad();
      return fl ? cat("(", a[0], " * ", a[0], ")") : cat("(", T, ")((", U, ")", a[0], " * (", U, ")", a[0], ")");
    case Op::reciprocal:
      if (dt == DType::bool_) return bad();
      return fl ? cat("((", T, ")1 / ", a[0], ")") : cat("gcg_int_div((", T, ")1, ", a[0], ")");
    case Op::erf: return fl ? cat("gcg_erf(", a[0], ")") : bad();
    case Op::is_finite: return fl ? cat("__builtin_isfinite(", a[0], ")") : std::string("true");
    case Op::bitwise_not:
      if (fl) return bad();
      return dt == DType::bool_ ? cat("(!", a[0], ")") : cat("(", T, ")(~", a[0], ")");
    case Op::stop_gradient:
    case Op::copy: return a[0];
    case Op::add:
    case Op::sub:
    case Op::mul: {
      if (dt == DType::bool_) return bad();
      const char* sym = op == Op::add ? "+" : op == Op::sub ? "-" : "*";
      return fl ? cat("(", a[0], " ", sym, " ", a[1], ")") : wrap2(sym);
    }
    case Op::div:
      if (dt == DType::bool_) return bad();
      return fl ? cat("(", a[0], " / ", a[1], ")") : cat("gcg_int_div(", a[0], ", ", a[1], ")");
    case Op::rem:
      if (dt == DType::bool_) return bad();
      return fl ? cat("gcg_fmod(", a[0], ", ", a[1], ")") : cat("gcg_int_rem(", a[0], ", ", a[1], ")");
    case Op::pow: return fl ? cat("gcg_pow(", a[0], ", ", a[1], ")") : bad();
    case Op::atan2: return fl ? cat("gcg_atan2(", a[0], ", ", a[1], ")") : bad();
    case Op::max:
    case Op::min:
      if (dt == DType::bool_) return bad();
      return cat(op == Op::max ? "gcg_max<" : "gcg_min<", T, ">(", a[0], ", ", a[1], ")");
    case Op::bitwise_and:
    case Op::bitwise_or:
    case Op::bitwise_xor: {
      if (fl) return bad();
      const char* sym = op == Op::bitwise_and ? "&" : op == Op::bitwise_or ? "|" : "^";
      return cat("(", T, ")(", a[0], " ", sym, " ", a[1], ")");
    }
    case Op::eq: return cat("(", a[0], " == ", a[1], ")");
    case Op::ne: return cat("(", a[0], " != ", a[1], ")");
    case Op::lt: return cat("(", a[0], " < ", a[1], ")");
    case Op::le: return cat("(", a[0], " <= ", a[1], ")");
    case Op::gt: return cat("(", a[0], " > ", a[1], ")");
    case Op::ge: return cat("(", a[0], " >= ", a[1], ")");
    case Op::select: return cat("(", a[0], " ? ", a[1], " : ", a[2], ")");
    case Op::convert_element_type: return cat("gcg_convert<", ctype(out), ", ", T, ">(", a[0], ")");
    default: break;
  }
  fail(cat(std::string(ir::op_name(op)), " cannot be emitted as an elementwise expression"));
}

// ---- ops as calls of graft's float math table (math.h)

std::optional<MathFn> op_math_fn(Op op, DType dt) {
  if (!ir::is_floating(dt)) return std::nullopt;
  return interpreter::float_fn_of(op);
}

std::string op_call(MathFn fn, const std::string& x, const std::string& y, const std::string& n) {
  return cat("gcg_call(", num(static_cast<int>(fn)), ", ", x, ", ", y, ", ", n, ")");
}

}  // namespace graft::codegen::cpu::detail
