// Transposition of the linear part of a partially evaluated JVP graph:
// cotangents flow from seeded values back through the linear nodes in
// reverse, each op's transpose rule emitting its operands' cotangents.
#pragma once

#include <utility>
#include <vector>

#include "transforms/partial_eval.h"

namespace graft::transforms {

// Seeds are (value of the JVP graph, its cotangent in the builder). Returns
// the cotangent of every value of the JVP graph (kZero where none arrived).
std::vector<ValueId> transpose_linear(const ir::Graph& jvp, const PartialEval& pe, ir::GraphBuilder& b,
                                      const std::vector<std::pair<ValueId, ValueId>>& seeds);

}  // namespace graft::transforms
