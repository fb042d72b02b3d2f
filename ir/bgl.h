// A Graph's data flow seen through Boost.Graph, and the passes that run BGL's
// algorithms on it: topological order after rewrites, dead code elimination,
// forward reachability (fusion's cycle check).
//
// Internal header: it drags in Boost, so nothing under include/graft/ may
// include it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include "ir/graph.h"

namespace graft::ir {

// An edge is one use: which value flows, and which operand of the consumer it
// is. add(x, x) therefore makes two parallel edges.
struct DataflowEdge {
  ValueId value = -1;
  size_t operand = 0;
};

using DataflowGraph =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, boost::no_property, DataflowEdge>;
using DataflowVertex = boost::graph_traits<DataflowGraph>::vertex_descriptor;

// Vertex i is graph.nodes()[i]. Edges run producer -> consumer; graph inputs
// have no producer and make no edges. Subgraphs in attributes are not entered:
// they see nothing of their parent, so they add no dependencies to it.
struct DataflowView {
  static constexpr int64_t kNoProducer = -1;

  DataflowGraph graph;
  std::vector<int64_t> producer;  // by ValueId: index of the defining node, or kNoProducer

  int64_t producer_of(ValueId v) const {
    return v >= 0 && static_cast<size_t>(v) < producer.size() ? producer[v] : kNoProducer;
  }
};

// Throws GraphFormatError when a node or a graph output uses a value that no
// node and no input defines ("undefined value %N"), when two nodes define the
// same value, or when a node defines a value the graph has no type for.
DataflowView dataflow_view(const Graph& g);

// Reorders g's nodes so every use follows its definition. An already sorted
// graph keeps its order exactly, so passes may call this after any rewrite;
// otherwise each node is placed once what it uses is placed, taking nodes in
// their current order. Throws GraphFormatError naming the nodes of a
// cycle ("cycle through node 3 (add) -> node 5 (mul) -> node 3"), or for an
// undefined value (see dataflow_view).
void topo_sort(Graph& g);

// Whether g is well formed and already in topological order: every value
// defined once (by an input or a node) and used only after its definition.
// Linear, with no adjacency lists; what every GraphBuilder-built graph is.
bool in_topological_order(const Graph& g);

// A copy of g without the nodes that do not contribute to g.outputs(). Inputs
// (the signature), outputs, node ids, value ids and node order are kept.
// Subgraphs in attributes are copied as they are.
Graph dead_code_elimination(const Graph& g);
// The same, moving the kept nodes out of `g` (no copies of a fresh graph).
Graph dead_code_elimination(Graph&& g);

// Which nodes (by index into g.nodes()) are reachable forward from the start
// nodes, the start nodes included. The view overload lets a pass that asks
// many times build the view once.
std::vector<bool> reachable_from(const Graph& g, const std::vector<size_t>& start_nodes);
std::vector<bool> reachable_from(const DataflowView& view, const std::vector<size_t>& start_nodes);

}  // namespace graft::ir
