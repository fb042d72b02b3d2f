// The CUDA C++ the CUDA code generator emits for each elementwise op, found
// by op name in elementwise.cpp.
#pragma once

#include <string>
#include <vector>

#include "graft/errors.h"
#include "ir/dtype.h"
#include "ir/op.h"

namespace graft::codegen::cuda {

// The CUDA C++ expression of an elementwise op over operand expressions `a`;
// dt: the operands' dtype (select: the branches'), out: the result's.
// Throws UnsupportedError for an op with no kernel for dt.
std::string op_expr(ir::Op op, DType dt, DType out, const std::vector<std::string>& a);

// Rethrows a refusal of the CPU emitter's shared parts (its expressions, its
// schedule's checks) as the CUDA emitter's: "cuda codegen: <why>".
[[noreturn]] void refuse_as_cuda(const UnsupportedError& from_cpu_emitter);

}  // namespace graft::codegen::cuda
