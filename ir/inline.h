// Inlining: copies a graph's nodes into a builder, with its inputs bound to
// given values; how a transformed graph joins the trace that called it.
#pragma once

#include <vector>

#include "ir/builder.h"

namespace graft::ir {

// Returns the values of g's outputs inside b. Nodes keep their locations and
// scopes; the builder shares nodes identical to ones it already has.
std::vector<ValueId> inline_graph(GraphBuilder& b, const Graph& g, const std::vector<ValueId>& inputs);

// g under another signature, for transforms that reorder or extend a
// subgraph's operands: the result takes inputs of `input_types`, binds g's
// input i to its input bind[i], and returns, for each entry k of `outputs`,
// g's output k if k < g.outputs().size(), else its own input k - that size.
GraphPtr rebind_graph(const Graph& g, const std::vector<ValueType>& input_types, const std::vector<size_t>& bind,
                      const std::vector<size_t>& outputs);

}  // namespace graft::ir
