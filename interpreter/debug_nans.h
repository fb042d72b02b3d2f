// GRAFT_DEBUG_NANS=1: every op's floating-point outputs are checked after it
// runs, and the first op that makes a NaN throws, naming itself, its operand
// and result types and the user's line that traced it.
#pragma once

#include "interpreter/kernel.h"
#include "ir/graph.h"
#include "ir/value.h"

namespace graft::interpreter {

bool debug_nans();  // GRAFT_DEBUG_NANS, read once per process

// Throws graft::Error when an output of `call` holds a NaN (only call it
// when debug_nans()). `node`, when given, names a fused kernel's ops.
void check_nans(const KernelCall& call, const ir::SourceLoc& loc, const ir::Node* node = nullptr);

}  // namespace graft::interpreter
