// dot_general on a GPU: one cuBLAS strided-batched GEMM (driver.h's
// GemmCall), read in place from the operands' row-major layouts.
//
// Taken: float or double operands whose batch axes lead in both operands in
// the same order, whose contracting axes form one run (increasing) at the
// start or the end of each operand's non-batch axes, and whose contraction
// has more than one element. The result [batch, lhs free, rhs free] is
// row-major C[M, N] = A[M, K] B[K, N] per batch entry; in cuBLAS's
// column-major terms that is C^T (N x M) = B^T A^T, so the rhs is cuBLAS's
// "A" and the lhs its "B", each transposed when stored the other way round
// ([N, K] rhs, [K, M] lhs). Anything else (other layouts, integers, a
// contraction of one element, whose IEEE -0 products a GEMM's 0 + a*b would
// lose) runs on the host; plan_dot_general says why.
#pragma once

#include <optional>
#include <string>

#include "codegen/cuda/driver.h"
#include "ir/attrs.h"
#include "ir/value.h"

namespace graft::codegen::cuda {

// The GEMM computing dot_general(lhs, rhs) with these attributes, pointers
// unset; nullopt with *why when it is not one.
std::optional<GemmCall> plan_dot_general(const ir::ValueType& lhs, const ir::ValueType& rhs, const ir::Attrs& attrs,
                                         std::string* why);

}  // namespace graft::codegen::cuda
