// The random op family: each op's shape/dtype rule, JVP, transpose and
// batching rule side by side, op by op in ops.def order (the rules an op
// takes from ops.def's standard columns are not repeated here).
//
// Shape/dtype rule of random_bits: a counter-based generator keyed by u32
// pairs. key u32[..., 2] with attribute `shape` gives u32[..., shape], so a
// batch of keys (vmap over keys) is one node.
//
// Transform rules of random_bits. It has no JVP (its output is not
// differentiable: see is_non_differentiable) and no transpose; only a
// batching rule.
#include "ops/rules.h"

namespace graft::ops {

// ---- random_bits

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

// random_bits takes any number of leading key axes natively (key u32[..., 2]
// -> u32[..., shape], each key's bits depending on that key alone), so a
// batch of keys is one node: the batch axis stays where it is among the
// leading axes, or, if it follows the trailing key pair, moves just before it.
std::vector<BatchedValue> random_bits_batch(BatchCtx& c) {
  const int64_t key_rank = c.unbatched_type(0).rank();  // including the trailing pair
  int64_t dim = c.operands[0].dim;
  ValueId key = c.operands[0].value;
  if (dim == key_rank) {
    key = c.move_axis(key, dim, key_rank - 1);
    dim = key_rank - 1;
  }
  return {{c.add(ir::Op::random_bits, {key}, c.attrs()), dim}};
}

}  // namespace graft::ops
