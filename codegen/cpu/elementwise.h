// The C++ the CPU code generator emits for each elementwise op, found by op
// name in elementwise.cpp: an inline expression (op_expr), or for the float
// ops the interpreter computes with Eigen, a call of graft's own function
// (op_math_fn, op_call; the functions are float_math.h's expressions,
// compiled into graft by math.cpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "codegen/cpu/math.h"
#include "ir/dtype.h"
#include "ir/op.h"

namespace graft::codegen::cpu::detail {

// The C++ expression of an elementwise op over operand expressions `a`;
// dt: the operands' dtype (select: the branches'). Throws UnsupportedError
// for an op it cannot emit as an expression.
std::string op_expr(ir::Op op, DType dt, DType out, const std::vector<std::string>& a);

// The function of math.h computing `op` on operands of dtype dt, or nullopt
// when the op is an inline expression.
std::optional<MathFn> op_math_fn(ir::Op op, DType dt);

// The statement computing y[0, n) = op(x[0, n)) with fn (pointers x and y).
std::string op_call(MathFn fn, const std::string& x, const std::string& y, const std::string& n);

}  // namespace graft::codegen::cpu::detail
