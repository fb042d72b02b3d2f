// The shape op family: each op's shape/dtype rule, JVP, transpose and
// batching rule side by side, op by op in ops.def order (the rules an op
// takes from ops.def's standard columns are not repeated here).
//
// Shape/dtype rules of layout ops: broadcast_in_dim, reshape, transpose, rev,
// slice, concatenate, pad. Attributes follow XLA's names.
//
// Transform rules of layout ops: all linear, so each JVP applies the op to
// the tangent (pad also to the padding value's tangent): ops.def's
// LINEAR_IN. Their transpose and batching rules are here.
#include <algorithm>

#include "ir/attr_access.h"
#include "ops/rules.h"

namespace graft::ops {

namespace {

// A per-axis attribute with an entry for the batch axis inserted at dim.
ir::Ints with_entry(ir::Ints v, int64_t dim, int64_t entry) {
  v.insert(v.begin() + dim, entry);
  return v;
}

}  // namespace

// ---- broadcast_in_dim

// shape: the result; broadcast_dimensions[i]: where operand axis i lands
// (strictly increasing); each operand dim is 1 or equals its target dim.
OutTypes broadcast_in_dim_shape(const RuleCtx& c) {
  const ValueType& x = c.input(0);
  const Ints& shape = c.attr_ints("shape");
  const Ints& dims = c.attr_ints("broadcast_dimensions");
  c.check_shape(shape, "shape");
  if (static_cast<int>(dims.size()) != x.rank())
    c.shape_error("broadcast_dimensions " + shape_str(dims) + " must have one entry per operand axis");
  for (size_t i = 0; i < dims.size(); ++i) {
    int d = c.axis(dims[i], static_cast<int>(shape.size()), "broadcast dimension");
    if (i > 0 && dims[i] <= dims[i - 1]) c.shape_error("broadcast_dimensions " + shape_str(dims) + " must increase");
    if (x.shape[i] != 1 && x.shape[i] != shape[d])
      c.shape_error("operand axis " + std::to_string(i) + " of size " + std::to_string(x.shape[i]) +
                    " cannot broadcast to size " + std::to_string(shape[d]) + " of " + shape_str(shape));
  }
  return {ValueType{x.dtype, shape}};
}

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

// broadcast_in_dim and reshape see the batch axis first, as a leading axis
// of the result (reshape needs it outside the reshaped block anyway).
std::vector<BatchedValue> broadcast_in_dim_batch(BatchCtx& c) {
  ValueId x = c.at(0, 0);
  ir::Ints shape = with_entry(ir::ints_attr(c.node(), "shape"), 0, c.axis_size);
  ir::Ints dims{0};
  for (int64_t d : ir::ints_attr(c.node(), "broadcast_dimensions")) dims.push_back(d + 1);
  return {{c.add(Op::broadcast_in_dim, {x}, {{"shape", shape}, {"broadcast_dimensions", dims}}), 0}};
}

// ---- reshape

OutTypes reshape_shape(const RuleCtx& c) {
  const ValueType& x = c.input(0);
  const Ints& sizes = c.attr_ints("new_sizes");
  c.check_shape(sizes, "new_sizes");
  if (checked_num_elements(sizes) != x.num_elements())
    c.shape_error("cannot reshape " + shape_str(x.shape) + " (" + std::to_string(x.num_elements()) + " elements) to " +
                  shape_str(sizes));
  return {ValueType{x.dtype, sizes}};
}

ir::IdList reshape_transpose(TransposeCtx& c) {
  ValueId ct = c.cotangents[0];
  if (ct == kZero) return {kZero};
  return {c.add(Op::reshape, {ct}, {{"new_sizes", ir::Ints(c.operand_types[0].shape)}})};
}

std::vector<BatchedValue> reshape_batch(BatchCtx& c) {
  ValueId x = c.at(0, 0);
  ir::Attrs attrs = c.attrs();
  attrs.set("new_sizes", with_entry(ir::ints_attr(c.node(), "new_sizes"), 0, c.axis_size));
  return {{c.add(Op::reshape, {x}, attrs), 0}};
}

// ---- transpose

OutTypes transpose_shape(const RuleCtx& c) {
  const ValueType& x = c.input(0);
  const Ints& perm = c.attr_ints("permutation");
  c.check_permutation(perm, x.rank(), "permutation");
  Shape out(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) out[i] = x.shape[perm[i]];
  return {ValueType{x.dtype, out}};
}

ir::IdList transpose_transpose(TransposeCtx& c) {
  ValueId ct = c.cotangents[0];
  if (ct == kZero) return {kZero};
  const ir::Ints& perm = ir::attr<ir::Ints>(c.node(), "permutation");
  ir::Ints inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[perm[i]] = static_cast<int64_t>(i);
  return {c.add(Op::transpose, {ct}, {{"permutation", inverse}})};
}

// transpose takes the batch axis along as the result's first axis.
std::vector<BatchedValue> transpose_batch(BatchCtx& c) {
  const int64_t dim = c.operands[0].dim;
  ir::Ints perm{dim};
  for (int64_t p : ir::ints_attr(c.node(), "permutation")) perm.push_back(p >= dim ? p + 1 : p);
  return {{c.add(Op::transpose, {c.operands[0].value}, {{"permutation", perm}}), 0}};
}

// ---- rev

OutTypes rev_shape(const RuleCtx& c) {
  const ValueType& x = c.input(0);
  std::vector<bool> seen(x.rank(), false);
  for (int64_t d : c.attr_ints("dimensions")) {
    int ax = c.axis(d, x.rank(), "dimension");
    if (seen[ax]) c.shape_error("dimension " + std::to_string(d) + " is repeated");
    seen[ax] = true;
  }
  return {x};
}

ir::IdList rev_transpose(TransposeCtx& c) {
  ValueId ct = c.cotangents[0];
  if (ct == kZero) return {kZero};
  return {c.add(Op::rev, {ct}, c.attrs())};
}

std::vector<BatchedValue> rev_batch(BatchCtx& c) {
  const int64_t dim = c.operands[0].dim;
  ir::Ints dims = ir::ints_attr(c.node(), "dimensions");
  for (int64_t& d : dims) d = d >= dim ? d + 1 : d;
  return {{c.add(Op::rev, {c.operands[0].value}, {{"dimensions", dims}}), dim}};
}

// ---- slice

OutTypes slice_shape(const RuleCtx& c) {
  const ValueType& x = c.input(0);
  const Ints& start = c.attr_ints("start_indices");
  const Ints& limit = c.attr_ints("limit_indices");
  const Ints& strides = c.attr_ints("strides");
  size_t r = x.shape.size();
  if (start.size() != r || limit.size() != r || strides.size() != r)
    c.shape_error("start_indices, limit_indices and strides need " + std::to_string(r) + " entries each");
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    if (start[i] < 0 || start[i] > limit[i] || limit[i] > x.shape[i] || strides[i] < 1)
      c.shape_error("slice " + shape_str(start) + ":" + shape_str(limit) + ":" + shape_str(strides) +
                    " does not fit axis " + std::to_string(i) + " of " + shape_str(x.shape));
    out[i] = limit[i] == start[i] ? 0 : (limit[i] - start[i] - 1) / strides[i] + 1;  // no overflow for huge strides
  }
  return {ValueType{x.dtype, out}};
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

std::vector<BatchedValue> slice_batch(BatchCtx& c) {
  const int64_t dim = c.operands[0].dim;
  ir::Attrs attrs = c.attrs();
  attrs.set("start_indices", with_entry(ir::ints_attr(c.node(), "start_indices"), dim, 0));
  attrs.set("limit_indices", with_entry(ir::ints_attr(c.node(), "limit_indices"), dim, c.axis_size));
  attrs.set("strides", with_entry(ir::ints_attr(c.node(), "strides"), dim, 1));
  return {{c.add(Op::slice, {c.operands[0].value}, attrs), dim}};
}

// ---- concatenate

OutTypes concatenate_shape(const RuleCtx& c) {
  if (c.num_inputs() == 0) c.shape_error("needs at least one operand");
  const ValueType& first = c.input(0);
  int dim = c.axis(c.attr_int("dimension"), first.rank(), "dimension");
  Shape out = first.shape;
  out[dim] = 0;
  for (const ValueType& t : c.inputs()) {
    if (t.dtype != first.dtype) c.dtype_error("operands must share one dtype");
    bool fits = t.rank() == first.rank();
    for (int i = 0; fits && i < first.rank(); ++i) fits = i == dim || t.shape[i] == first.shape[i];
    if (!fits) c.shape_error("operand shapes must agree except along dimension " + std::to_string(dim));
    out[dim] += t.shape[dim];
  }
  c.check_shape(out, "result");
  return {ValueType{first.dtype, out}};
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

std::vector<BatchedValue> concatenate_batch(BatchCtx& c) {
  int64_t dim = c.first_batched_dim();
  std::vector<ValueId> ins;
  for (size_t i = 0; i < c.operands.size(); ++i) ins.push_back(c.at(i, dim));
  const int64_t axis = ir::attr<int64_t>(c.node(), "dimension");
  return {{c.add(Op::concatenate, ins, {{"dimension", axis >= dim ? axis + 1 : axis}}), dim}};
}

// ---- pad

// pad(x, value): low/high may be negative (cropping); interior >= 0.
OutTypes pad_shape(const RuleCtx& c) {
  const ValueType& x = c.input(0);
  const ValueType& v = c.input(1);
  if (v.rank() != 0) c.shape_error("padding value must be a scalar");
  if (v.dtype != x.dtype) c.dtype_error("padding value must have the operand's dtype");
  const Ints& lo = c.attr_ints("padding_low");
  const Ints& hi = c.attr_ints("padding_high");
  const Ints& in = c.attr_ints("padding_interior");
  size_t r = x.shape.size();
  if (lo.size() != r || hi.size() != r || in.size() != r)
    c.shape_error("padding_low, padding_high and padding_interior need " + std::to_string(r) + " entries each");
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    if (in[i] < 0 || in[i] > kMaxDim || lo[i] < -kMaxDim || lo[i] > kMaxDim || hi[i] < -kMaxDim || hi[i] > kMaxDim)
      c.shape_error("padding of axis " + std::to_string(i) + " is out of range");
    int64_t d = x.shape[i];
    if (d > 1 && in[i] > kMaxDim / (d - 1))
      c.shape_error("interior padding of axis " + std::to_string(i) + " is too large");
    out[i] = lo[i] + hi[i] + d + (d > 0 ? (d - 1) * in[i] : 0);
    if (out[i] < 0) c.shape_error("padding makes axis " + std::to_string(i) + " negative");
  }
  c.check_shape(out, "result");
  return {ValueType{x.dtype, out}};
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
    ct_v =
        c.add(Op::sub, {c.add(Op::reduce_sum, {ct}, {{"axes", all}}), c.add(Op::reduce_sum, {ct_x}, {{"axes", all}})});
  }
  return {c.unknown[0] ? ct_x : kZero, ct_v};
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

}  // namespace graft::ops
