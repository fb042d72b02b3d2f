// Whether a node may write an output over one of its operands: every output
// element is computed from the operands' elements at the same index, each
// read before the output is written. True for elementwise ops flagged
// inplace in ops.def, and for fused kernels of elementwise ops, broadcasts
// and reshapes (a kernel ending in a reduction may read its operands again
// after writing elementwise outputs). jit's memory planner and the
// interpreter's donation planner ask the same question here.
#pragma once

#include "ir/graph.h"

namespace graft::ir {

bool elementwise_in_place(const Node& node);

// Whether a node may write its output over operand 0 (and only that one):
// the indexing ops flagged inplace in ops.def (dynamic_update_slice,
// scatter_add), which copy operand 0 and then write a window or add rows;
// over a dying operand the copy is skipped. The operand must not be read
// through another operand slot of the node (the caller checks).
bool updates_first_operand_in_place(const Node& node);

}  // namespace graft::ir
