// Inlining: copies a graph's nodes into a builder, with its inputs bound to
// given values; how a transformed graph joins the trace that called it.
#pragma once

#include <vector>

#include "ir/builder.h"

namespace graft::ir {

// Returns the values of g's outputs inside b. Nodes keep their locations and
// scopes; the builder shares nodes identical to ones it already has.
std::vector<ValueId> inline_graph(GraphBuilder& b, const Graph& g, const std::vector<ValueId>& inputs);

}  // namespace graft::ir
