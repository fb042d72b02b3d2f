// Reverse mode through while_loop (JAX refuses it): the pieces the partial
// evaluator and while's transpose rule share.
//
// A while node met by reverse mode is the JVP's joint loop: primal carries
// ("known": they depend on primal operands only, and the condition reads
// only them) and tangent carries ("unknown", linear in the tangents).
// Partial evaluation runs the known part as a loop of its own in the forward
// pass. The transpose runs the steps backwards without knowing the trip
// count N in advance and within a fixed memory bound of 2K carries
// (K = the node's "checkpoints" / 2; WhileOptions, 128 by default):
//   1. a loop over the known part counts N;
//   2. a second stores every s-th primal carry, s = ceil(N / K), in K slots;
//   3. segments in reverse: from its slot, a segment's steps are replayed
//      once, every s2-th carry kept in K more slots (s2 = ceil(s / K));
//      then its steps in reverse, each carry recomputed from the nearest
//      kept one (no recomputation while N <= K^2), each step's tangent
//      map transposed (transpose_graph of the body's tangent part).
// Cost: about four forward passes and one backward pass while N <= K^2;
// beyond, each step recomputes up to s2 - 1 steps.
#pragma once

#include <optional>
#include <vector>

#include "ir/builder.h"
#include "transforms/rules/jvp_rule.h"

namespace graft::transforms {

// How a while node's operands split, given which of them are unknown.
struct WhileSplit {
  size_t cond_consts = 0, body_consts = 0, carries = 0;
  std::vector<bool> body_const_known;  // per body const
  std::vector<bool> carry_known;       // per carry: depends on known values only (the primal part)
};

// The split, when the condition reads only known values and some carry is
// unknown; nullopt otherwise (the loop is then unknown as a whole).
std::optional<WhileSplit> split_while(const ir::Node& n, const std::vector<bool>& operand_unknown);

// Emits into b a while loop over the known part only: operands (cond consts,
// known body consts, known carries) in b, its outputs the known carries.
std::vector<ValueId> emit_known_while(ir::GraphBuilder& b, const ir::Node& n, const WhileSplit& s,
                                      const std::vector<ValueId>& operands);

// The cotangents of the node's operands (kZero for known ones) given the
// cotangents of its outputs; `operands` holds the known operands' values.
std::vector<ValueId> emit_while_reverse(ir::GraphBuilder& b, const ir::Node& n, const WhileSplit& s,
                                        const std::vector<ValueId>& operands, const std::vector<bool>& operand_unknown,
                                        const std::vector<ValueId>& cotangents);

}  // namespace graft::transforms
