// jit's pass after fusion: values a fused kernel writes out only for other
// fused kernels to read, recomputed by those kernels instead when that
// costs a few elementwise operations on values they can read as cheaply.
//
// A training step's forward kernels return every elementwise value the
// backward pass reads (a GELU's tanh and its square, layer norm's centred
// values, batch norm's ReLU mask): full-size arrays written once, kept alive
// from the forward pass to the backward one, and read back. XLA recomputes
// such values inside the backward fusions; so does this pass.
//
// Output r of fusion P is recomputed by its readers when:
//  - r is not a graph output and every reader of r is a fusion node;
//  - r's value in P's body is at most kMaxRecomputedOps elementwise ops (and
//    broadcasts, scalar constants) from leaves: P's operands, or P's other
//    outputs, which then stay outputs;
//  - for each reader, the leaves it does not read already take at most r's
//    bytes: its reads do not grow, and a leaf kept alive for it until then
//    costs no more memory than r did over the same span (r lived from P to
//    the reader anyway).
// Each reader's body then computes r from the leaves (copied ops), and P
// stops returning r. One pass in topological order, linear in the graph's
// size times kMaxRecomputedOps.
#pragma once

#include <cstdint>

#include "ir/graph.h"

namespace graft::transforms {

struct RecomputeStats {
  int64_t outputs_dropped = 0;  // fusion outputs no longer written
  int64_t bytes_dropped = 0;    // their sizes, summed
  int64_t ops_copied = 0;       // body ops copied into readers
};

// 16 takes in a tanh GELU's values from its input (9-12 ops each): in
// bench/gpt_step 244 -> 180 MiB of temporaries at the same step time, which
// 32 did not change; 8 left them written.
inline constexpr int64_t kMaxRecomputedOps = 16;

// `fused` is fuse()'s output (topologically ordered); the result computes
// the same values, inputs and outputs in their order.
ir::GraphPtr recompute_fused_outputs(const ir::Graph& fused, RecomputeStats* stats = nullptr);

}  // namespace graft::transforms
