// Shape/dtype rules of layout ops: broadcast_in_dim, reshape, transpose, rev,
// slice, concatenate, pad. Attributes follow XLA's names.
#include "ir/shape_rules/rule.h"

namespace graft::ir {

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

OutTypes reshape_shape(const RuleCtx& c) {
  const ValueType& x = c.input(0);
  const Ints& sizes = c.attr_ints("new_sizes");
  c.check_shape(sizes, "new_sizes");
  if (checked_num_elements(sizes) != x.num_elements())
    c.shape_error("cannot reshape " + shape_str(x.shape) + " (" + std::to_string(x.num_elements()) +
                  " elements) to " + shape_str(sizes));
  return {ValueType{x.dtype, sizes}};
}

OutTypes transpose_shape(const RuleCtx& c) {
  const ValueType& x = c.input(0);
  const Ints& perm = c.attr_ints("permutation");
  c.check_permutation(perm, x.rank(), "permutation");
  Shape out(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) out[i] = x.shape[perm[i]];
  return {ValueType{x.dtype, out}};
}

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
    if (d > 1 && in[i] > kMaxDim / (d - 1)) c.shape_error("interior padding of axis " + std::to_string(i) + " is too large");
    out[i] = lo[i] + hi[i] + d + (d > 0 ? (d - 1) * in[i] : 0);
    if (out[i] < 0) c.shape_error("padding makes axis " + std::to_string(i) + " negative");
  }
  c.check_shape(out, "result");
  return {ValueType{x.dtype, out}};
}

}  // namespace graft::ir
