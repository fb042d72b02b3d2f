// Shape/dtype rule of random_bits: a counter-based generator keyed by u32
// pairs. key u32[..., 2] with attribute `shape` gives u32[..., shape], so a
// batch of keys (vmap over keys) is one node.
#include "ir/shape_rules/rule.h"

namespace graft::ir {

OutTypes random_bits_shape(const RuleCtx& c) {
  const ValueType& key = c.input(0);
  if (key.dtype != DType::u32) c.dtype_error(std::string("key must be u32, got ") + dtype_name(key.dtype));
  if (key.rank() == 0 || key.shape.back() != 2) c.shape_error("key must have a trailing axis of size 2");
  const Ints& shape = c.attr_ints("shape");
  Shape out(key.shape.begin(), key.shape.end() - 1);
  out.insert(out.end(), shape.begin(), shape.end());
  c.check_shape(out, "result");
  return {ValueType{DType::u32, out}};
}

}  // namespace graft::ir
