// Shape/dtype rules of the windowed reductions (XLA's ReduceWindow and
// SelectAndScatter, as jax.lax's reduce_window_shape_tuple): one window
// dimension, stride, low and high padding and base and window dilation per
// operand dimension. Each output size is
// (dilated padded operand - dilated window) / stride + 1, or 0 when the
// window does not fit. select_and_gather_add(tangent, operand) gives that
// shape from operands of one shape; select_and_scatter_add(source, operand)
// gives the operand's, its source having the windowed shape.
#include <string>

#include "ir/dtype.h"
#include "ir/shape_rules/rule.h"

namespace graft::ir {

namespace {

int64_t dilated(int64_t size, int64_t dilation) { return size == 0 ? 0 : (size - 1) * dilation + 1; }

// The shape of the windows' results over an operand of shape `in`.
Shape windowed_shape(const RuleCtx& c, const Shape& in) {
  const size_t rank = in.size();
  const Ints &window = c.attr_ints("window_dimensions"), &strides = c.attr_ints("window_strides"),
             &lo = c.attr_ints("padding_low"), &hi = c.attr_ints("padding_high"), &base = c.attr_ints("base_dilation"),
             &wd = c.attr_ints("window_dilation");
  for (const auto& [name, v] : {std::pair<const char*, const Ints*>{"window_dimensions", &window},
                                {"window_strides", &strides},
                                {"padding_low", &lo},
                                {"padding_high", &hi},
                                {"base_dilation", &base},
                                {"window_dilation", &wd}})
    if (v->size() != rank)
      c.shape_error(std::string(name) + " needs " + std::to_string(rank) +
                    " entries (one per operand dimension), got " + std::to_string(v->size()));
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const std::string dim = "dimension " + std::to_string(i) + ": ";
    if (window[i] < 1 || window[i] > kMaxDim)
      c.shape_error(dim + "window size must be at least 1, got " + std::to_string(window[i]));
    if (strides[i] < 1 || base[i] < 1 || wd[i] < 1 || strides[i] > kMaxDim || base[i] > kMaxDim || wd[i] > kMaxDim)
      c.shape_error(dim + "strides and dilations must be at least 1");
    if (lo[i] < -kMaxDim || lo[i] > kMaxDim || hi[i] < -kMaxDim || hi[i] > kMaxDim)
      c.shape_error(dim + "padding out of range");
    const int64_t padded = dilated(in[i], base[i]) + lo[i] + hi[i];
    if (padded < 0)
      c.shape_error(dim + "padding (" + std::to_string(lo[i]) + ", " + std::to_string(hi[i]) +
                    ") leaves a negative size");
    const int64_t span = dilated(window[i], wd[i]);
    out[i] = padded < span ? 0 : (padded - span) / strides[i] + 1;
  }
  c.check_shape(out, "result");
  return out;
}

void check_select(const RuleCtx& c) {
  const std::string& s = c.attr_string("select");
  if (s != "ge" && s != "le") c.shape_error("select must be \"ge\" (maximum) or \"le\" (minimum), got \"" + s + "\"");
  check_accepted_dtype(c, c.input(1).dtype);
}

// reduce_window_sum, _max and _min: the operand's dtype over the windowed shape.
OutTypes reduce_window_shape(const RuleCtx& c) {
  check_accepted_dtype(c, c.input(0).dtype);
  return {ValueType{c.input(0).dtype, windowed_shape(c, c.input(0).shape)}};
}

}  // namespace

OutTypes reduce_window_sum_shape(const RuleCtx& c) { return reduce_window_shape(c); }
OutTypes reduce_window_max_shape(const RuleCtx& c) { return reduce_window_shape(c); }
OutTypes reduce_window_min_shape(const RuleCtx& c) { return reduce_window_shape(c); }

OutTypes select_and_gather_add_shape(const RuleCtx& c) {
  check_select(c);
  const ValueType &t = c.input(0), &x = c.input(1);
  if (t != x) c.shape_error("tangent " + type_str(t) + " and operand " + type_str(x) + " must have one type");
  return {ValueType{t.dtype, windowed_shape(c, x.shape)}};
}

OutTypes select_and_scatter_add_shape(const RuleCtx& c) {
  check_select(c);
  const ValueType &source = c.input(0), &x = c.input(1);
  if (source.dtype != x.dtype)
    c.dtype_error(std::string("source ") + dtype_name(source.dtype) + " and operand " + dtype_name(x.dtype) +
                  " differ");
  const Shape windows = windowed_shape(c, x.shape);
  if (source.shape != windows)
    c.shape_error("source " + type_str(source) + " must have the windowed shape " + shape_str(windows) +
                  " of operand " + type_str(x));
  return {x};
}

}  // namespace graft::ir
