// The fusion op family: each op's shape/dtype rule, JVP, transpose and
// batching rule side by side, op by op in ops.def order (the rules an op
// takes from ops.def's standard columns are not repeated here).
//
// Shape/dtype rule of jit's fused kernels.
//
// fusion(operands..)  body: operands -> outs (exactly one graph); the node's
//                     outputs are the body's outputs. The body's own nodes
//                     are checked by the verifier, which recurses into it.
#include "ops/rules.h"

namespace graft::ops {

// ---- fusion

OutTypes fusion_shape(const RuleCtx& c) {
  const Graph& body = c.attr_graph("body");
  c.check_signature(body, "body", c.inputs(), nullptr);
  if (body.outputs().empty()) c.shape_error("body must return at least one value");
  return body.output_types();
}

}  // namespace graft::ops
