// A seeded generator of well-typed graphs over the op table: ops drawn from
// ir/ops.def (every op whose attributes are numbers, lists, dtypes and
// literals: elementwise, reductions, layout, indexing, dot_general, iota,
// constants, random bits), operands drawn from the values made so far,
// attributes drawn per the op's schema (ir/attr_schema.h) with hints from
// the attribute's name, and each node kept only if the op's own shape rule
// accepts it (GraphBuilder runs it), so every graph is valid by construction.
// Control flow (cond, while, scan) gets subgraphs grown the same way, nested
// up to two deep; a while counts its trips, so it always ends. Inputs have
// every dtype and shapes with 0-size and size-1 axes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "graft/graft.h"
#include "ir/graph.h"

namespace graft::test {

struct RandomGraph {
  std::shared_ptr<const ir::Graph> graph;
  std::vector<Array> inputs;  // concrete values for the graph's inputs
  std::vector<std::string> ops;  // the ops drawn, subgraphs included (for reports)
};

// differentiable: every input f64 and only ops whose derivative is their
// slope (no jumps, no stop_gradient, no conversions), first output f64: a
// program for checking jvp and grad against finite differences.
RandomGraph random_graph(uint64_t seed, int nodes = 8, bool differentiable = false);

}  // namespace graft::test
