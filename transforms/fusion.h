// jit's fusion pass: groups nodes into `fusion` nodes, each run as one kernel.
//
// What fuses: elementwise ops, broadcast_in_dim and reshapes (every buffer
// is contiguous row-major, so a reshape never moves an element) whose output
// has the group's element count (its iteration space), and reductions
// (reduce_sum/max/min/prod/and/or) whose operand has it. A reduction may end
// a kernel: its result is not read inside the group (its consumers start a
// new one); several reductions of one group must reduce the same shape over
// the same axes. Everything else (dot_general, gather, sort, transpose,
// concatenate, collectives, control flow, ...) reads finished buffers and
// stays a plain node. Scalar constants are copied into the bodies that read
// them instead of being passed as operands. A group of one node stays a plain
// node; a group whose values are read outside it returns each of them (a
// multi-output kernel). Bodies keep the nodes' locations and scopes.
//
// Grouping (one pass in topological order): a fusible node joins the groups
// of its operands that share its iteration space, unless a merge would make
// a cycle: another path between the merged groups through a node outside
// them (a dot that reads the group and feeds the joining node, say). The
// pass keeps a topological order of the contracted graph as one number per
// group (its slot); a merge is cycle-free when the merged group can take a
// slot after everything it reads and before everything that already reads
// it. When that quick test fails, a reachability check on the contracted
// graph (a Boost.Graph topological sort, which also renumbers the slots)
// decides; at most kMaxExactChecks such checks run per pass, after which a
// failing quick test refuses the merge (never wrong, only less fusion).
//
// Complexity: O((V + E) α(V) + V log V) for the grouping and rebuilding
// (union-find, one scan of each node's operands, one sort of the groups),
// plus at most kMaxExactChecks reachability checks of O(V + E) each: linear
// in the graph's size.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"

namespace graft::transforms {

struct FusionStats {
  int64_t kernels = 0;                // fusion nodes made
  int64_t ops_fused = 0;              // nodes of the input graph moved into them
  int64_t constants_duplicated = 0;   // scalar constants copied into bodies
  int64_t merges_refused = 0;         // merges refused because they would make a cycle
  int64_t reachability_checks = 0;    // exact checks run (at most kMaxExactChecks)
};

inline constexpr int64_t kMaxExactChecks = 16;

// g must be topologically ordered (every graph graft makes is). The result
// computes what g computes; inputs and outputs keep their order.
//
// donated (by input, may be empty): inputs whose buffers outputs may take
// over. An elementwise node that returns a graph output from a donated input
// of its shape stays a plain node. (The walker's donation planner now admits
// fusion nodes of elementwise bodies too, ir/in_place.h, so this argument
// could go; it is kept until a benchmark says which is faster.)
ir::GraphPtr fuse(const ir::Graph& g, FusionStats* stats = nullptr, const std::vector<bool>& donated = {});

// The ops a fusion body may hold (elementwise, broadcast_in_dim, reshape, the
// reductions above, and scalar constants).
bool fusible_op(ir::Op op);

}  // namespace graft::transforms
