// Batching (vmap) as a graph-to-graph rewrite: every node is replaced by its
// batching rule's nodes, which carry the batch axis along.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace graft::transforms {

struct BatchedGraph {
  ir::GraphPtr graph;
  std::vector<int64_t> out_dims;  // where each output's batch axis is (-1: not batched)
};

// g batched: input i has a batch axis of axis_size at in_dims[i] (-1: not
// batched); the outputs keep their batch axes where the rules left them.
// Collectives over axis_name (and axis_index) reduce over the batch axis.
BatchedGraph batch_graph(const ir::Graph& g, const std::vector<int64_t>& in_dims, int64_t axis_size,
                         const std::string& axis_name);

// bg's graph with output k's batch axis moved to want[k]; an unbatched
// output is broadcast there. want[k] == -1 asks for an output that is not
// batched (ShapeError if it is).
ir::GraphPtr place_batch_axes(const BatchedGraph& bg, const std::vector<int64_t>& want, int64_t axis_size);

// As batch_graph, with output k's batch axis moved to out_dims[k]; an
// unbatched output is broadcast there. out_dims[k] == -1 asks for an output
// that is not batched (ShapeError if it is).
ir::GraphPtr vmap_graph(const ir::Graph& g, const std::vector<int64_t>& in_dims, const std::vector<int64_t>& out_dims,
                        int64_t axis_size, const std::string& axis_name);

}  // namespace graft::transforms
