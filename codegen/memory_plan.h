// jit's memory planner: places every intermediate value of an executable's
// (fused, ordered) graph in one arena, from the values' live ranges, so a call
// makes one allocation for all its temporaries and the arena's size is known
// before it runs (memory_analysis().temp_bytes).
//
// A value lives from the node that computes it to its last reader. Blocks are
// placed best-fit among the gaps that dead blocks left (coalesced), the arena
// growing only when none fits (every block a multiple of 64 bytes, so every
// value stays 64-byte aligned). A
// node's output takes over the block of one of its operands (in place) only
// when that operand is an arena value of the same size that dies at this
// node, no other output of the node took it, and the node reads each element
// before writing it at the same index (an elementwise op with ops.def's
// inplace flag, or a fused kernel of elementwise ops, broadcasts and reshapes;
// not cumulative ops, nor kernels ending in a reduction).
//
// Not in the arena: the graph's inputs (the caller's buffers), its outputs
// (they outlive the call), and values that back a donated input.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"

namespace graft::codegen {

struct MemoryPlan {
  std::vector<int64_t> offset;  // by value id: byte offset in the arena, or -1
  int64_t arena_bytes = 0;
  int64_t in_place = 0;         // outputs that took a dying operand's block
  int64_t placed = 0;           // values placed in the arena
  int64_t sum_bytes = 0;        // their sizes summed: what one block each would take
};

// `excluded` (by value id, may be empty): values the caller places elsewhere
// (donation). O(n log n) in the number of values.
MemoryPlan plan_memory(const ir::Graph& graph, const std::vector<bool>& excluded = {});

}  // namespace graft::codegen
