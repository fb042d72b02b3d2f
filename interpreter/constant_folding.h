// Constant folding for jit: a node whose operands are all constants is run
// now, at compile time, and replaced by a constant holding its result (when
// that result is small enough to keep in the graph; broadcasts stay
// symbolic). One pass in node order.
#pragma once

#include <cstdint>

#include "ir/graph.h"

namespace graft::interpreter {

struct FoldResult {
  ir::GraphPtr graph;
  int64_t folded = 0;  // nodes replaced by constants
};

FoldResult fold_constants(const ir::Graph& g, int64_t max_elements = int64_t{1} << 12);

}  // namespace graft::interpreter
