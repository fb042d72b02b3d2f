// Transform rules of layout ops: all linear, so each JVP applies the op to
// the tangent (pad also to the padding value's tangent).
#include <algorithm>

#include "transforms/rules/jvp_rule.h"
#include "transforms/rules/transpose_rule.h"

namespace graft::transforms {
namespace {

using ir::Op;
using Out = std::vector<ValueId>;

Out unary_linear(JvpCtx& c) { return {c.linear({0})}; }
Out pad_rule(JvpCtx& c) { return {c.linear({0, 1})}; }

Out concatenate_rule(JvpCtx& c) {
  std::vector<size_t> all(c.primals.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  return {c.linear(all)};
}

}  // namespace

void register_shape_jvp_rules(JvpRuleTable& t) {
  for (Op op : {Op::broadcast_in_dim, Op::reshape, Op::transpose, Op::rev, Op::slice})
    t[static_cast<size_t>(op)] = unary_linear;
  t[static_cast<size_t>(Op::pad)] = pad_rule;
  t[static_cast<size_t>(Op::concatenate)] = concatenate_rule;
}


// ---- transpose rules
namespace {

using Cts = std::vector<ValueId>;

// Sums the broadcast axes away and restores the operand's size-1 axes.
Cts broadcast_in_dim_transpose(TransposeCtx& c) {
  ValueId ct = c.cotangents[0];
  if (ct == kZero) return {kZero};
  const ir::ValueType& x = c.operand_types[0];
  const ir::Ints& shape = std::get<ir::Ints>(*c.attrs().find("shape"));
  const ir::Ints& dims = std::get<ir::Ints>(*c.attrs().find("broadcast_dimensions"));
  ir::Ints sum_axes;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    auto it = std::find(dims.begin(), dims.end(), d);
    if (it == dims.end() || (x.shape[it - dims.begin()] == 1 && shape[d] != 1)) sum_axes.push_back(d);
  }
  ValueId summed = sum_axes.empty() ? ct : c.add(Op::reduce_sum, {ct}, {{"axes", sum_axes}});
  return {c.add(Op::reshape, {summed}, {{"new_sizes", ir::Ints(x.shape)}})};
}

Cts reshape_transpose(TransposeCtx& c) {
  ValueId ct = c.cotangents[0];
  if (ct == kZero) return {kZero};
  return {c.add(Op::reshape, {ct}, {{"new_sizes", ir::Ints(c.operand_types[0].shape)}})};
}

Cts transpose_transpose(TransposeCtx& c) {
  ValueId ct = c.cotangents[0];
  if (ct == kZero) return {kZero};
  const ir::Ints& perm = std::get<ir::Ints>(*c.attrs().find("permutation"));
  ir::Ints inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[perm[i]] = static_cast<int64_t>(i);
  return {c.add(Op::transpose, {ct}, {{"permutation", inverse}})};
}

Cts rev_transpose(TransposeCtx& c) {
  ValueId ct = c.cotangents[0];
  if (ct == kZero) return {kZero};
  return {c.add(Op::rev, {ct}, c.attrs())};
}

// A strided slice's cotangent is the slice's cotangent padded back into place.
Cts slice_transpose(TransposeCtx& c) {
  ValueId ct = c.cotangents[0];
  if (ct == kZero) return {kZero};
  const ir::ValueType x = c.operand_types[0];
  const ir::Ints& start = std::get<ir::Ints>(*c.attrs().find("start_indices"));
  const ir::Ints& strides = std::get<ir::Ints>(*c.attrs().find("strides"));
  const Shape out = c.emit().type(ct).shape;
  size_t r = x.shape.size();
  ir::Ints lo(r), hi(r), interior(r);
  for (size_t i = 0; i < r; ++i) {
    if (out[i] == 0) {  // an empty slice: all zeros
      lo[i] = x.shape[i];
      hi[i] = 0;
      interior[i] = 0;
      continue;
    }
    lo[i] = start[i];
    interior[i] = strides[i] - 1;
    hi[i] = x.shape[i] - 1 - (start[i] + (out[i] - 1) * strides[i]);
  }
  ValueId zero = c.zeros(ir::ValueType{x.dtype, {}});
  return {c.add(Op::pad, {ct, zero}, {{"padding_low", lo}, {"padding_high", hi}, {"padding_interior", interior}})};
}

Cts concatenate_transpose(TransposeCtx& c) {
  ValueId ct = c.cotangents[0];
  Cts out(c.operand_types.size(), kZero);
  if (ct == kZero) return out;
  int64_t dim = std::get<int64_t>(*c.attrs().find("dimension"));
  const Shape total = c.emit().type(ct).shape;
  int64_t offset = 0;
  for (size_t k = 0; k < c.operand_types.size(); ++k) {
    const Shape s = c.operand_types[k].shape;
    if (c.unknown[k]) {
      ir::Ints start(s.size(), 0), limit(total.begin(), total.end()), strides(s.size(), 1);
      start[dim] = offset;
      limit[dim] = offset + s[dim];
      out[k] = c.add(Op::slice, {ct}, {{"start_indices", start}, {"limit_indices", limit}, {"strides", strides}});
    }
    offset += s[dim];
  }
  return out;
}

// pad(x, v): x's cotangent is the strided window of ct it landed in (after
// undoing negative padding by padding ct back); v's is the sum of the rest.
Cts pad_transpose(TransposeCtx& c) {
  ValueId ct = c.cotangents[0];
  if (ct == kZero) return {kZero, kZero};
  const ir::ValueType x = c.operand_types[0];
  const ir::Ints lo = std::get<ir::Ints>(*c.attrs().find("padding_low"));
  const ir::Ints hi = std::get<ir::Ints>(*c.attrs().find("padding_high"));
  const ir::Ints interior = std::get<ir::Ints>(*c.attrs().find("padding_interior"));
  size_t r = x.shape.size();
  ir::Ints unlo(r), unhi(r), no_interior(r, 0);
  bool cropped = false;
  for (size_t i = 0; i < r; ++i) {
    unlo[i] = std::max<int64_t>(-lo[i], 0);
    unhi[i] = std::max<int64_t>(-hi[i], 0);
    cropped = cropped || unlo[i] || unhi[i];
  }
  ValueId whole = ct;
  if (cropped)
    whole = c.add(Op::pad, {ct, c.zeros(ir::ValueType{x.dtype, {}})},
                  {{"padding_low", unlo}, {"padding_high", unhi}, {"padding_interior", no_interior}});
  ir::Ints start(r), limit(r), strides(r);
  for (size_t i = 0; i < r; ++i) {
    start[i] = std::max<int64_t>(lo[i], 0);
    strides[i] = interior[i] + 1;
    limit[i] = x.shape[i] == 0 ? start[i] : start[i] + (x.shape[i] - 1) * strides[i] + 1;
  }
  ValueId ct_x = c.add(Op::slice, {whole}, {{"start_indices", start}, {"limit_indices", limit}, {"strides", strides}});
  ValueId ct_v = kZero;
  if (c.unknown[1]) {
    ir::Ints all(r);
    for (size_t i = 0; i < r; ++i) all[i] = static_cast<int64_t>(i);
    ct_v = c.add(Op::sub, {c.add(Op::reduce_sum, {ct}, {{"axes", all}}), c.add(Op::reduce_sum, {ct_x}, {{"axes", all}})});
  }
  return {c.unknown[0] ? ct_x : kZero, ct_v};
}

}  // namespace

void register_shape_transpose_rules(TransposeRuleTable& t) {
  t[static_cast<size_t>(Op::broadcast_in_dim)] = broadcast_in_dim_transpose;
  t[static_cast<size_t>(Op::reshape)] = reshape_transpose;
  t[static_cast<size_t>(Op::transpose)] = transpose_transpose;
  t[static_cast<size_t>(Op::rev)] = rev_transpose;
  t[static_cast<size_t>(Op::slice)] = slice_transpose;
  t[static_cast<size_t>(Op::concatenate)] = concatenate_transpose;
  t[static_cast<size_t>(Op::pad)] = pad_transpose;
}

}  // namespace graft::transforms
