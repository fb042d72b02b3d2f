// Shape/dtype rule of sort: operands of one shape sorted together along
// `dimension`, ordered by the first `num_keys` (lexicographically).
#include "ir/shape_rules/rule.h"

namespace graft::ir {

OutTypes sort_shape(const RuleCtx& c) {
  if (c.num_inputs() == 0) c.shape_error("needs at least one operand");
  const Shape& shape = c.input(0).shape;
  for (const ValueType& t : c.inputs())
    if (t.shape != shape) c.shape_error("operands must share one shape");
  c.axis(c.attr_int("dimension"), static_cast<int>(shape.size()), "dimension");
  int64_t keys = c.attr_int("num_keys");
  if (keys < 1 || keys > static_cast<int64_t>(c.num_inputs()))
    c.shape_error("num_keys " + std::to_string(keys) + " must be in [1, " + std::to_string(c.num_inputs()) + "]");
  c.attr_bool("is_stable");
  return c.inputs();
}

}  // namespace graft::ir
