// Transform rules of sort. JVP: sorting permutes, so each tangent is
// permuted alike: the permutation comes from sorting an iota along with the
// keys, and is applied by a gather along the sorted axis.
#include <algorithm>

#include "transforms/rules/batch_rule.h"
#include "ir/attr_access.h"
#include "transforms/rules/jvp_rule.h"

namespace graft::transforms {

using ir::Op;

// ---- JVP rules

ir::IdList sort_jvp(JvpCtx& c) {
  int64_t dim = ir::attr<int64_t>(c.node(), "dimension");
  int64_t num_keys = ir::attr<int64_t>(c.node(), "num_keys");
  const ir::ValueType t = c.type(c.primals[0]);
  ValueId iota = c.add(Op::iota, {}, {{"dtype", DType::i32}, {"shape", ir::Ints(t.shape)}, {"dimension", dim}});
  std::vector<ValueId> keys(c.primals.begin(), c.primals.begin() + num_keys);
  keys.push_back(iota);
  ir::Attrs attrs = c.attrs();
  std::vector<ValueId> sorted = c.add_multi(Op::sort, keys, attrs);
  ValueId perm = sorted.back();
  std::vector<ValueId> out;
  for (size_t k = 0; k < c.primals.size(); ++k)
    out.push_back(c.tangents[k] == kZero ? kZero : c.take_along_axis(c.tangents[k], perm, dim));
  return out;
}

// top_k: the values' tangent is the operand's, gathered at the indices.
ir::IdList top_k_jvp(JvpCtx& c) {
  if (c.tangents[0] == kZero) return {kZero, kZero};
  const int64_t last = static_cast<int64_t>(c.type(c.primals[0]).shape.size()) - 1;
  return {c.take_along_axis(c.tangents[0], c.outputs[1], last), kZero};
}

// ---- batching rules (vmap)

// Sorting lines along `dimension` is independent per example: every operand
// takes the batch axis where the first batched one has it (unbatched ones are
// broadcast in) and the sorted dimension shifts past it. One sort node.
std::vector<BatchedValue> sort_batch(BatchCtx& c) {
  int64_t dim = c.first_batched_dim();
  std::vector<ValueId> ins;
  for (size_t i = 0; i < c.operands.size(); ++i) ins.push_back(c.at(i, dim));
  ir::Attrs attrs = c.attrs();
  const int64_t d = ir::int_attr(c.node(), "dimension");
  attrs.set("dimension", d >= dim ? d + 1 : d);
  std::vector<BatchedValue> out;
  for (ValueId v : c.add_multi(Op::sort, ins, attrs)) out.push_back({v, dim});
  return out;
}

// top_k selects along the last axis: the batch axis goes first, out of its way.
std::vector<BatchedValue> top_k_batch(BatchCtx& c) {
  std::vector<ValueId> outs = c.add_multi(Op::top_k, {c.at(0, 0)}, c.attrs());
  return {{outs[0], 0}, {outs[1], 0}};
}

}  // namespace graft::transforms
