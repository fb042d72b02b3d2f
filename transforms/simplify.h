// jit's graph clean-up, one pass in node order (linear in the graph's size):
// identical nodes are shared (CSE, by the builder's hash-consing), algebraic
// identities fold away (x*1, x+0, x-0, x/1, -(-x), a transpose undoing a
// transpose, identity transposes, reshapes, broadcasts and conversions),
// a sum of zero-padded pieces at disjoint windows becomes the pieces written
// into one buffer (the cotangents of slices of a stacked array: O(L), not
// O(L^2)), and what no output needs is dropped (DCE). x+0 -> x does not keep
// the sign of a -0 input, as XLA's simplifier does not.
#pragma once

#include <cstdint>

#include "ir/graph.h"

namespace graft::transforms {

struct SimplifyResult {
  ir::GraphPtr graph;
  int64_t rewrites = 0;  // nodes replaced by an existing value
};

SimplifyResult simplify(const ir::Graph& g);

}  // namespace graft::transforms
