// The jaxpr-like text view of a graph: one line per node, subgraphs indented.
#pragma once

#include <string>

#include "ir/graph.h"

namespace graft::ir {

std::string to_text(const Graph& graph);

}  // namespace graft::ir
