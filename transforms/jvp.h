// Forward-mode differentiation as a graph-to-graph rewrite.
#pragma once

#include <vector>

#include "ir/graph.h"

namespace graft::transforms {

// The JVP graph of g. Its inputs are g's inputs, then one tangent for each
// input with has_tangent[i] (float inputs only); its outputs are g's outputs,
// then one tangent per output. Zero tangents stay symbolic inside and are
// materialised only where an output needs one.
ir::GraphPtr jvp_graph(const ir::Graph& g, const std::vector<bool>& has_tangent);

}  // namespace graft::transforms
