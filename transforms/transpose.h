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

// The transpose of a graph that is linear in its inputs flagged `unknown`
// (and arbitrary in the others): its inputs are g's known inputs in order,
// then one cotangent per output of g; its outputs are the cotangents of the
// unknown inputs in order (zeros where none arrives). Its known part is
// recomputed inside. Control flow transposes its subgraphs with it.
ir::GraphPtr transpose_graph(const ir::Graph& g, const std::vector<bool>& unknown);

}  // namespace graft::transforms
