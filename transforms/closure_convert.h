// Closure conversion of user-ruled calls (custom_jvp, custom_vjp): values a
// user's function closes over that an enclosing transform traces become
// trailing operands of the call, and the call's graphs are rewritten to take
// them. The derivative with respect to such a value is the derivative of the
// primal function itself (the user's rule speaks for the explicit arguments
// only), so differentiating through a closure is never silently zero.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"

namespace graft::transforms {

// The graphs of a custom_jvp_call over operands (args.., C..), where C is the
// call's closed-over values then the rule's. `call` takes (args.., its
// values..); `rule` takes (primals.., tangents.., its values..) and returns
// (outputs.., output tangents..).
struct ClosedCustomJvp {
  ir::GraphPtr call, jvp;
};
ClosedCustomJvp close_custom_jvp(const ir::Graph& call, size_t call_values, const ir::Graph& rule, size_t rule_values);

// The graphs of a custom_vjp_call over operands (args.., C..), where C is the
// values call, fwd and bwd close over, in that order. `call` takes (args..,
// its values..); `fwd` (args.., its values..) -> (outputs.., residuals..);
// `bwd` (residuals.., output cotangents.., its values..) -> arg cotangents.
struct ClosedCustomVjp {
  ir::GraphPtr call, fwd, bwd;
  int64_t num_residuals = 0;
};
ClosedCustomVjp close_custom_vjp(const ir::Graph& call, size_t call_values, const ir::Graph& fwd, size_t fwd_values,
                                 const ir::Graph& bwd, size_t bwd_values, int64_t num_residuals);

}  // namespace graft::transforms
