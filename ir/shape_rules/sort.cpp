// Shape/dtype rules of sort (operands of one shape sorted together along
// `dimension`, ordered by the first `num_keys` lexicographically) and top_k
// (the k largest along the last axis, and their i32 indices).
#include <cstdint>

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
  for (int64_t k = 0; k < keys; ++k) check_accepted_dtype(c, c.input(static_cast<size_t>(k)).dtype);  // ordered keys
  c.attr_bool("is_stable");
  return c.inputs();
}

OutTypes top_k_shape(const RuleCtx& c) {
  const ValueType& x = c.input(0);
  check_accepted_dtype(c, x.dtype);
  if (x.shape.empty()) c.shape_error("needs an operand of rank 1 or more, got a scalar");
  const int64_t k = c.attr_int("k"), n = x.shape.back();
  if (k < 0 || k > n)
    c.shape_error("k = " + std::to_string(k) + " must be in [0, " + std::to_string(n) + "], the last axis' size");
  if (n > INT32_MAX) c.shape_error("a last axis of " + std::to_string(n) + " does not fit its i32 indices");
  Shape shape = x.shape;
  shape.back() = k;
  return OutTypes(std::vector<ValueType>{{x.dtype, shape}, {DType::i32, shape}});
}

}  // namespace graft::ir
