// Whether a node has effects: its op is EFFECTFUL in ops.def (io_callback),
// or it carries subgraphs (a scan, cond, while, custom call, pmap) holding
// such a node at any depth. Passes ask this, never the op alone: dead-code
// elimination keeps such a node whether used or not, CSE never merges two,
// and constant folding never runs one at compile time.
#pragma once

#include "ir/attrs.h"
#include "ir/graph.h"
#include "ir/op.h"

namespace graft::ir {

bool has_effects(Op op, const Attrs& attrs);
inline bool has_effects(const Node& node) { return has_effects(node.op, node.attrs); }
// Whether any node of g has effects.
bool graph_has_effects(const Graph& g);

}  // namespace graft::ir
