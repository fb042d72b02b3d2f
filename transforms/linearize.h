// linearize: a function's JVP split once into what runs now (the primal
// outputs and the residuals the tangent computation reads) and a linear
// graph that maps tangents to output tangents from those residuals, so each
// later tangent costs only the linear part (JAX's jax.linearize).
#pragma once

#include <vector>

#include "ir/graph.h"

namespace graft::transforms {

struct Linearized {
  // Inputs: g's inputs. Outputs: g's outputs, then the residuals.
  ir::GraphPtr primal;
  // Inputs: the residuals, then one tangent per input flagged in has_tangent.
  // Outputs: one tangent per output of g.
  ir::GraphPtr linear;
  size_t num_residuals = 0;
};

Linearized linearize_graph(const ir::Graph& g, const std::vector<bool>& has_tangent);

}  // namespace graft::transforms
