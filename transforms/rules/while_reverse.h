// Reverse mode through while_loop (JAX refuses it): the pieces the partial
// evaluator and while's transpose rule share.
//
// A while node met by reverse mode is the JVP's joint loop: primal carries
// ("known": they depend on primal operands only, and the condition reads
// only them) and tangent carries ("unknown", linear in the tangents).
// Partial evaluation runs the known part as a loop of its own in the forward
// pass. The transpose runs the steps backwards without knowing the trip
// count N in advance and within a fixed memory bound of C carries (C = the
// node's "checkpoints"; WhileOptions, 128 by default):
//   1. a loop over the known part counts N;
//   2. one loop sweeps backwards on the binomial schedule (revolve,
//      Griewank and Walther 2000): a stack of C slots holds carries; each
//      iteration either advances from the top slot and pushes the carry
//      reached, or advances to the step to reverse next (`end`), transposes
//      that step's tangent map (transpose_graph of the body's tangent part)
//      and pops the top slot once it holds that very step.
// No step runs forward more than r times for the least r with
// C(C + r, C) >= N, and the total of forward steps is the fewest any
// schedule keeping C carries needs: N - 1 while N <= C + 1, under 2N up to
// (C + 1)(C + 2) / 2 (8385 for C = 128), under 3N up to (C + 1)(C + 2)(C + 3) / 6.
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
