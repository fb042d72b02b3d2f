// The jaxpr-like text view of a graph: one line per node, subgraphs indented.
#pragma once

#include <string>

#include "ir/graph.h"

namespace graft::ir {

std::string to_text(const Graph& graph);
// An attribute's value as the text view writes it: 3, (0,1), 0.5, f32,
// 'name', [1, 2, ...] (a literal's first literal_limit elements); "" for
// subgraphs, which are printed below their node.
std::string attr_text(const AttrValue& value, int64_t literal_limit = 8);
// One node's line (and its subgraphs, indented below it), as to_text prints it.
std::string node_text(const Graph& graph, const Node& node);

}  // namespace graft::ir
