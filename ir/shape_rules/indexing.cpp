// Shape/dtype rules of indexing with run-time indices.
//
// dynamic_slice(x, i0..i{r-1}) / dynamic_update_slice(x, update, i0..i{r-1}):
// one integer scalar start index per axis, clamped into range at run time.
//
// gather(x, indices) and scatter_add(x, indices, updates) take whole entries
// of x along `axis` (TensorFlow's gather with batch_dims): the first
// `batch_dims` axes of x and indices are paired, so a vmapped gather stays one
// gather. Result shape: x[:axis] + indices[batch_dims:] + x[axis+1:].
// Out-of-range indices are clamped by gather and dropped by scatter_add.
#include "ir/dtype.h"
#include "ir/shape_rules/rule.h"

namespace graft::ir {
namespace {

using Types = std::vector<ValueType>;

void check_start_indices(const RuleCtx& c, size_t first, int rank) {
  size_t n = c.num_inputs() - first;
  if (static_cast<int>(n) != rank)
    c.shape_error("needs " + std::to_string(rank) + " start indices (one per axis), got " + std::to_string(n));
  for (size_t i = first; i < c.num_inputs(); ++i) {
    if (c.input(i).rank() != 0) c.shape_error("start indices must be scalars");
    if (!is_integer(c.input(i).dtype)) c.dtype_error("start indices must be integers");
  }
}

Shape gathered_shape(const RuleCtx& c, const ValueType& x, const ValueType& idx) {
  if (!is_integer(idx.dtype)) c.dtype_error(std::string("indices must be integers, got ") + dtype_name(idx.dtype));
  int64_t b = c.attr_int("batch_dims");
  if (b < 0 || b > idx.rank() || b > x.rank())
    c.shape_error("batch_dims " + std::to_string(b) + " exceeds the rank of the operand or the indices");
  int axis = c.axis(c.attr_int("axis"), x.rank(), "axis");
  if (axis < b) c.shape_error("axis " + std::to_string(axis) + " must not be a batch dimension (batch_dims " + std::to_string(b) + ")");
  for (int i = 0; i < b; ++i)
    if (x.shape[i] != idx.shape[i])
      c.shape_error("batch dimension " + std::to_string(i) + " differs between operand and indices");
  Shape out(x.shape.begin(), x.shape.begin() + axis);
  out.insert(out.end(), idx.shape.begin() + b, idx.shape.end());
  out.insert(out.end(), x.shape.begin() + axis + 1, x.shape.end());
  c.check_shape(out, "result");
  return out;
}

}  // namespace

OutTypes dynamic_slice_shape(const RuleCtx& c) {
  if (c.num_inputs() < 1) c.shape_error("needs an operand");
  const ValueType& x = c.input(0);
  check_start_indices(c, 1, x.rank());
  const Ints& sizes = c.attr_ints("slice_sizes");
  if (static_cast<int>(sizes.size()) != x.rank())
    c.shape_error("slice_sizes " + shape_str(sizes) + " needs one entry per axis of " + shape_str(x.shape));
  for (int i = 0; i < x.rank(); ++i)
    if (sizes[i] < 0 || sizes[i] > x.shape[i])
      c.shape_error("slice_sizes " + shape_str(sizes) + " do not fit in " + shape_str(x.shape));
  return {ValueType{x.dtype, sizes}};
}

OutTypes dynamic_update_slice_shape(const RuleCtx& c) {
  if (c.num_inputs() < 2) c.shape_error("needs an operand and an update");
  const ValueType& x = c.input(0);
  const ValueType& u = c.input(1);
  if (u.dtype != x.dtype) c.dtype_error("update dtype must equal the operand's");
  if (u.rank() != x.rank()) c.shape_error("update rank must equal the operand's");
  for (int i = 0; i < x.rank(); ++i)
    if (u.shape[i] > x.shape[i]) c.shape_error("update " + shape_str(u.shape) + " does not fit in " + shape_str(x.shape));
  check_start_indices(c, 2, x.rank());
  return {x};
}

OutTypes gather_shape(const RuleCtx& c) {
  const ValueType& x = c.input(0);
  ValueType out{x.dtype, gathered_shape(c, x, c.input(1))};
  // Out-of-range indices clamp into the axis; an empty axis has nothing to
  // clamp to, so a non-empty result from it is an error, as NumPy's take.
  const int axis = c.axis(c.attr_int("axis"), x.rank(), "axis");
  if (x.shape[static_cast<size_t>(axis)] == 0 && out.num_elements() > 0)
    c.shape_error("cannot take entries from axis " + std::to_string(axis) + " of " + type_str(x) +
                  ", which is empty; the result " + type_str(out) + " is not");
  return {out};
}

OutTypes scatter_add_shape(const RuleCtx& c) {
  const ValueType& x = c.input(0);
  const ValueType& u = c.input(2);
  if (x.dtype == DType::bool_) c.dtype_error("needs a numeric operand, got bool");
  if (u.dtype != x.dtype)
    c.dtype_error(std::string("updates dtype ") + dtype_name(u.dtype) + " must equal the operand's " + dtype_name(x.dtype));
  ValueType expected{x.dtype, gathered_shape(c, x, c.input(1))};
  if (u != expected) c.shape_error("updates must be " + type_str(expected) + ", got " + type_str(u));
  return {x};
}

}  // namespace graft::ir
