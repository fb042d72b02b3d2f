// The CUDA C++ the CUDA code generator emits for each elementwise op, found
// by op name in elementwise.cpp.
#pragma once

#include <string>
#include <vector>

#include "ir/dtype.h"
#include "ir/op.h"

namespace graft::codegen::cuda {

// The CUDA C++ expression of an elementwise op over operand expressions `a`;
// dt: the operands' dtype (select: the branches'), out: the result's.
// Throws UnsupportedError for an op with no kernel for dt.
std::string op_expr(ir::Op op, DType dt, DType out, const std::vector<std::string>& a);

}  // namespace graft::codegen::cuda
