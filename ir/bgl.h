// A Graph's data flow seen through Boost.Graph, for the files that run BGL's
// algorithms on it (ir/bgl.cpp implements ir/passes.h with them).
//
// Internal header: it drags in Boost. Passes that only call topo_sort, dead
// code elimination or reachability include the Boost-free ir/passes.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include "ir/graph.h"
#include "ir/passes.h"

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

// reachable_from on a view built once, for a pass that asks many times.
// (The Graph overload is declared in ir/passes.h.)
std::vector<bool> reachable_from(const DataflowView& view, const std::vector<size_t>& start_nodes);

}  // namespace graft::ir
