// Whole-graph passes every layer runs: topological order after rewrites,
// dead code elimination, forward reachability. Boost-free: ir/bgl.cpp
// implements them with Boost.Graph, behind this header.
#pragma once

#include <cstddef>
#include <vector>

#include "ir/graph.h"

namespace graft::ir {

// Reorders g's nodes so every use follows its definition. An already sorted
// graph keeps its order exactly, so passes may call this after any rewrite;
// otherwise each node is placed once what it uses is placed, taking nodes in
// their current order. Throws GraphFormatError naming the nodes of a
// cycle ("cycle through node 3 (add) -> node 5 (mul) -> node 3"), or for an
// undefined value ("undefined value %N").
void topo_sort(Graph& g);

// Whether g is well formed and already in topological order: every value
// defined once (by an input or a node) and used only after its definition.
// Linear, with no adjacency lists; what every GraphBuilder-built graph is.
bool in_topological_order(const Graph& g);

// A copy of g without the nodes that do not contribute to g.outputs() (nodes
// with effects, ir/effects.h, always stay). Inputs
// (the signature), outputs, node ids, value ids and node order are kept.
// Subgraphs in attributes are copied as they are.
Graph dead_code_elimination(const Graph& g);
// The same, moving the kept nodes out of `g` (no copies of a fresh graph).
Graph dead_code_elimination(Graph&& g);
// The same for a graph that recomputes what another node already computed
// (the tangent half of a scan's, cond's, checkpoint's or pmap's JVP, whose
// transpose recomputes the primal): its effects (io_callback, debug prints)
// ran in the primal node, so they are dropped too unless a kept output
// needs one's results (then it runs again).
Graph recomputation_dce(Graph&& g);

// Which nodes (by index into g.nodes()) are reachable forward from the start
// nodes, the start nodes included.
std::vector<bool> reachable_from(const Graph& g, const std::vector<size_t>& start_nodes);

}  // namespace graft::ir
