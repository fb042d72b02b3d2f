// Partial evaluation of a JVP graph: the nodes that depend only on primal
// inputs ("known") are emitted into a builder now; the rest, linear in the
// tangent inputs ("unknown"), are left for transposition.
#pragma once

#include <vector>

#include "ir/builder.h"
#include "transforms/rules/jvp_rule.h"

namespace graft::transforms {

struct PartialEval {
  std::vector<bool> unknown;         // by value id of the JVP graph
  std::vector<ValueId> known;        // by value id: its value in the builder (kZero if unknown)
  std::vector<size_t> linear_nodes;  // indices of the unknown nodes, in order
};

// jvp's first `primal_inputs.size()` inputs are primals (bound to those
// builder values); the remaining inputs are tangents.
PartialEval partial_eval(const ir::Graph& jvp, ir::GraphBuilder& b, const std::vector<ValueId>& primal_inputs);

}  // namespace graft::transforms
