// The derivative formulas of ops.def's DERIVATIVE column, parsed (see
// derivative_formula.cpp for the language).
#pragma once

#include "ir/op.h"

namespace graft::transforms {

struct Formula;

// op's formula, parsed once; an op without one, or a malformed formula, is
// an InternalError naming the op.
const Formula& derivative_formula(ir::Op op);

}  // namespace graft::transforms
