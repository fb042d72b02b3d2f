// jit's step between simplification and fusion: every remat node (a
// checkpointed function's forward pass, or one never differentiated) becomes
// its body's nodes, so fusion sees through it; checkpoint_name nodes, which
// only told differentiation what a policy may save, become their operand.
//
// It runs after CSE and shares no nodes: a checkpoint's backward pass
// recomputes values that its forward pass computes too, from the same
// operands, and merging the two would keep the forward values alive until
// the backward pass (the memory checkpointing saves). Fusion builds without
// sharing for the same reason.
#pragma once

#include "ir/graph.h"

namespace graft::transforms {

// g with its remat nodes inlined (nested ones too) and its checkpoint_name
// nodes removed; g itself when it holds neither. Bodies of other ops
// (loops, branches) are left as they are.
ir::GraphPtr inline_remat(const ir::GraphPtr& g);

}  // namespace graft::transforms
