// Transform rules of random_bits. It has no JVP (its output is not
// differentiable: see is_non_differentiable) and no transpose; only a
// batching rule, below.
#include "transforms/rules/batch_rule.h"

namespace graft::transforms {

// ---- batching rules (vmap)

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

}  // namespace graft::transforms
