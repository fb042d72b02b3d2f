// Shape/dtype rules of host callbacks: the outputs are the types the
// callback declares (ShapeDtype in the API); operands are whatever the user
// passed.
#include "ir/shape_rules/rule.h"

namespace graft::ir {

OutTypes pure_callback_shape(const RuleCtx& c) {
  const std::string& method = c.attr_string("vmap_method");
  if (method != "sequential" && method != "expand_dims" && method != "broadcast_all")
    c.format_error("vmap_method must be sequential, expand_dims or broadcast_all, not '" + method + "'");
  return c.attr_callback("callback").results;
}

OutTypes io_callback_shape(const RuleCtx& c) {
  c.attr_bool("ordered");
  return c.attr_callback("callback").results;
}

}  // namespace graft::ir
