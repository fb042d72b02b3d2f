// Transform rules of layout ops: all linear, so each JVP applies the op to
// the tangent (pad also to the padding value's tangent): ops.def's
// LINEAR_IN. Their transpose and batching rules are here.
#include <algorithm>

#include "transforms/rules/batch_rule.h"
#include "ir/attr_access.h"
#include "transforms/rules/jvp_rule.h"
#include "transforms/rules/transpose_rule.h"

namespace graft::transforms {

using ir::Op;

// ---- transpose rules

// Sums the broadcast axes away and restores the operand's size-1 axes.
ir::IdList broadcast_in_dim_transpose(TransposeCtx& c) {
  ValueId ct = c.cotangents[0];
  if (ct == kZero) return {kZero};
  const ir::ValueType& x = c.operand_types[0];
  const ir::Ints& shape = ir::attr<ir::Ints>(c.node(), "shape");
  const ir::Ints& dims = ir::attr<ir::Ints>(c.node(), "broadcast_dimensions");
  ir::Ints sum_axes;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    auto it = std::find(dims.begin(), dims.end(), d);
    if (it == dims.end() || (x.shape[it - dims.begin()] == 1 && shape[d] != 1)) sum_axes.push_back(d);
  }
  ValueId summed = sum_axes.empty() ? ct : c.add(Op::reduce_sum, {ct}, {{"axes", sum_axes}});
  return {c.add(Op::reshape, {summed}, {{"new_sizes", ir::Ints(x.shape)}})};
}

ir::IdList reshape_transpose(TransposeCtx& c) {
  ValueId ct = c.cotangents[0];
  if (ct == kZero) return {kZero};
  return {c.add(Op::reshape, {ct}, {{"new_sizes", ir::Ints(c.operand_types[0].shape)}})};
}

ir::IdList transpose_transpose(TransposeCtx& c) {
  ValueId ct = c.cotangents[0];
  if (ct == kZero) return {kZero};
  const ir::Ints& perm = ir::attr<ir::Ints>(c.node(), "permutation");
  ir::Ints inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[perm[i]] = static_cast<int64_t>(i);
  return {c.add(Op::transpose, {ct}, {{"permutation", inverse}})};
}

ir::IdList rev_transpose(TransposeCtx& c) {
  ValueId ct = c.cotangents[0];
  if (ct == kZero) return {kZero};
  return {c.add(Op::rev, {ct}, c.attrs())};
}

// A strided slice's cotangent is the slice's cotangent padded back into place.
ir::IdList slice_transpose(TransposeCtx& c) {
  ValueId ct = c.cotangents[0];
  if (ct == kZero) return {kZero};
  const ir::ValueType x = c.operand_types[0];
  const ir::Ints& start = ir::attr<ir::Ints>(c.node(), "start_indices");
  const ir::Ints& strides = ir::attr<ir::Ints>(c.node(), "strides");
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

ir::IdList concatenate_transpose(TransposeCtx& c) {
  ValueId ct = c.cotangents[0];
  ir::IdList out(c.operand_types.size(), kZero);
  if (ct == kZero) return out;
  int64_t dim = ir::attr<int64_t>(c.node(), "dimension");
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
ir::IdList pad_transpose(TransposeCtx& c) {
  ValueId ct = c.cotangents[0];
  if (ct == kZero) return {kZero, kZero};
  const ir::ValueType x = c.operand_types[0];
  const ir::Ints lo = ir::attr<ir::Ints>(c.node(), "padding_low");
  const ir::Ints hi = ir::attr<ir::Ints>(c.node(), "padding_high");
  const ir::Ints interior = ir::attr<ir::Ints>(c.node(), "padding_interior");
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


// ---- batching rules (vmap)
namespace {

// A per-axis attribute with an entry for the batch axis inserted at dim.
ir::Ints with_entry(ir::Ints v, int64_t dim, int64_t entry) {
  v.insert(v.begin() + dim, entry);
  return v;
}

}  // namespace

// broadcast_in_dim and reshape see the batch axis first, as a leading axis
// of the result (reshape needs it outside the reshaped block anyway).
std::vector<BatchedValue> broadcast_in_dim_batch(BatchCtx& c) {
  ValueId x = c.at(0, 0);
  ir::Ints shape = with_entry(ir::ints_attr(c.node(), "shape"), 0, c.axis_size);
  ir::Ints dims{0};
  for (int64_t d : ir::ints_attr(c.node(), "broadcast_dimensions")) dims.push_back(d + 1);
  return {{c.add(Op::broadcast_in_dim, {x}, {{"shape", shape}, {"broadcast_dimensions", dims}}), 0}};
}

std::vector<BatchedValue> reshape_batch(BatchCtx& c) {
  ValueId x = c.at(0, 0);
  ir::Attrs attrs = c.attrs();
  attrs.set("new_sizes", with_entry(ir::ints_attr(c.node(), "new_sizes"), 0, c.axis_size));
  return {{c.add(Op::reshape, {x}, attrs), 0}};
}

// transpose takes the batch axis along as the result's first axis.
std::vector<BatchedValue> transpose_batch(BatchCtx& c) {
  const int64_t dim = c.operands[0].dim;
  ir::Ints perm{dim};
  for (int64_t p : ir::ints_attr(c.node(), "permutation")) perm.push_back(p >= dim ? p + 1 : p);
  return {{c.add(Op::transpose, {c.operands[0].value}, {{"permutation", perm}}), 0}};
}

std::vector<BatchedValue> rev_batch(BatchCtx& c) {
  const int64_t dim = c.operands[0].dim;
  ir::Ints dims = ir::ints_attr(c.node(), "dimensions");
  for (int64_t& d : dims) d = d >= dim ? d + 1 : d;
  return {{c.add(Op::rev, {c.operands[0].value}, {{"dimensions", dims}}), dim}};
}

std::vector<BatchedValue> slice_batch(BatchCtx& c) {
  const int64_t dim = c.operands[0].dim;
  ir::Attrs attrs = c.attrs();
  attrs.set("start_indices", with_entry(ir::ints_attr(c.node(), "start_indices"), dim, 0));
  attrs.set("limit_indices", with_entry(ir::ints_attr(c.node(), "limit_indices"), dim, c.axis_size));
  attrs.set("strides", with_entry(ir::ints_attr(c.node(), "strides"), dim, 1));
  return {{c.add(Op::slice, {c.operands[0].value}, attrs), dim}};
}

std::vector<BatchedValue> concatenate_batch(BatchCtx& c) {
  int64_t dim = c.first_batched_dim();
  std::vector<ValueId> ins;
  for (size_t i = 0; i < c.operands.size(); ++i) ins.push_back(c.at(i, dim));
  const int64_t axis = ir::attr<int64_t>(c.node(), "dimension");
  return {{c.add(Op::concatenate, ins, {{"dimension", axis >= dim ? axis + 1 : axis}}), dim}};
}

// pad with one padding value keeps the batch axis unpadded. A batched
// padding value (one per example) fills through a mask of the padded cells.
std::vector<BatchedValue> pad_batch(BatchCtx& c) {
  const bool value_batched = c.operands[1].dim != kNotBatched;
  const int64_t dim = value_batched ? 0 : c.operands[0].dim;
  ValueId x = c.at(0, dim);
  ir::Attrs attrs = c.attrs();
  attrs.set("padding_low", with_entry(ir::ints_attr(c.node(), "padding_low"), dim, 0));
  attrs.set("padding_high", with_entry(ir::ints_attr(c.node(), "padding_high"), dim, 0));
  attrs.set("padding_interior", with_entry(ir::ints_attr(c.node(), "padding_interior"), dim, 0));
  if (!value_batched) return {{c.add(Op::pad, {x, c.operands[1].value}, attrs), dim}};
  ir::GraphBuilder& b = c.builder();
  const ir::ValueType xt = c.unbatched_type(0);
  const ir::ValueType scalar{xt.dtype, {}};
  ValueId padded = c.add(Op::pad, {x, emit_full(b, 0.0, scalar, &c.node())}, attrs);
  // 1 where a cell of x landed, 0 where padding did (the original pad, unbatched).
  ValueId landed = c.add(Op::pad, {emit_full(b, 1.0, xt, &c.node()), emit_full(b, 0.0, scalar, &c.node())}, c.attrs());
  const ir::ValueType cell = c.type(landed);
  ValueId from_x = c.add(Op::ne, {landed, emit_full(b, 0.0, cell, &c.node())});
  const ir::Ints shape(c.type(padded).shape);
  ir::Ints rest;
  for (int64_t d = 1; d <= cell.rank(); ++d) rest.push_back(d);
  ValueId mask = c.add(Op::broadcast_in_dim, {from_x}, {{"shape", shape}, {"broadcast_dimensions", rest}});
  ValueId fill = c.add(Op::broadcast_in_dim, {c.at(1, 0)}, {{"shape", shape}, {"broadcast_dimensions", ir::Ints{0}}});
  return {{c.add(Op::select, {mask, padded, fill}), 0}};
}

}  // namespace graft::transforms
