// Graphviz DOT of a graph, for looking at it (`dot -Tsvg`): nodes labelled
// with their op and output types, inputs and outputs as ellipses, edges with
// the value they carry, named scopes and subgraph attributes (cond branches,
// while bodies, ...) as nested clusters.
#pragma once

#include <string>

#include "ir/graph.h"

namespace graft::ir {

// Draws broken graphs too (cycles, uses out of order, undefined values in
// red), since that is when one most wants to see a graph. Throws
// GraphFormatError only for subgraphs nested absurdly deep.
std::string to_dot(const Graph& g);

}  // namespace graft::ir
