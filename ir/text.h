// The jaxpr-like text view of a graph: one line per node, subgraphs indented.
#pragma once

#include <string>

#include "ir/graph.h"

namespace graft::ir {

std::string to_text(const Graph& graph);
// One node's line (and its subgraphs, indented below it), as to_text prints it.
std::string node_text(const Graph& graph, const Node& node);

}  // namespace graft::ir
