// Reverse-mode differentiation as a graph-to-graph rewrite, JAX's route:
// forward mode (jvp_graph), then partial evaluation (the primal part runs
// forward, the tangent part is linear), then transposition of the linear part.
#pragma once

#include <vector>

#include "ir/graph.h"

namespace graft::transforms {

// The VJP graph of g with respect to the inputs flagged in wrt (float only).
// Its inputs are g's inputs, then one cotangent per output of g; its outputs
// are g's outputs, then the cotangent of each flagged input.
ir::GraphPtr vjp_graph(const ir::Graph& g, const std::vector<bool>& wrt);

// How many primal values the backward pass reads from the forward pass (the
// residuals a reverse-mode step must keep alive); checkpoint lowers it.
size_t count_residuals(const ir::Graph& g, const std::vector<bool>& wrt);

}  // namespace graft::transforms
