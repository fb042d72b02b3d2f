// The sort op family: each op's shape/dtype rule, JVP, transpose and
// batching rule side by side, op by op in ops.def order (the rules an op
// takes from ops.def's standard columns are not repeated here).
//
// Shape/dtype rules of sort (operands of one shape sorted together along
// `dimension`, ordered by the first `num_keys` lexicographically) and top_k
// (the k largest along the last axis, and their i32 indices).
//
// Transform rules of sort. JVP: sorting permutes, so each tangent is
// permuted alike: the permutation comes from sorting an iota along with the
// keys, and is applied by a gather along the sorted axis.
#include <algorithm>
#include <cstdint>

#include "ir/attr_access.h"
#include "ops/rules.h"

namespace graft::ops {

// ---- sort

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

// ---- top_k

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

// top_k: the values' tangent is the operand's, gathered at the indices.
ir::IdList top_k_jvp(JvpCtx& c) {
  if (c.tangents[0] == kZero) return {kZero, kZero};
  const int64_t last = static_cast<int64_t>(c.type(c.primals[0]).shape.size()) - 1;
  return {c.take_along_axis(c.tangents[0], c.outputs[1], last), kZero};
}

// top_k selects along the last axis: the batch axis goes first, out of its way.
std::vector<BatchedValue> top_k_batch(BatchCtx& c) {
  std::vector<ValueId> outs = c.add_multi(Op::top_k, {c.at(0, 0)}, c.attrs());
  return {{outs[0], 0}, {outs[1], 0}};
}

}  // namespace graft::ops
