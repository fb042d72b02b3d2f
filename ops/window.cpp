// The window op family: each op's shape/dtype rule, JVP, transpose and
// batching rule side by side, op by op in ops.def order (the rules an op
// takes from ops.def's standard columns are not repeated here).
//
// Shape/dtype rules of the windowed reductions (XLA's ReduceWindow and
// SelectAndScatter, as jax.lax's reduce_window_shape_tuple): one window
// dimension, stride, low and high padding and base and window dilation per
// operand dimension. Each output size is
// (dilated padded operand - dilated window) / stride + 1, or 0 when the
// window does not fit. select_and_gather_add(tangent, operand) gives that
// shape from operands of one shape; select_and_scatter_add(source, operand)
// gives the operand's, its source having the windowed shape.
//
// Transform rules of the windowed reductions, JAX's
// (jax/_src/lax/windowed_reductions.py): reduce_window_sum is linear, its
// transpose a window sum over the cotangent padded and dilated by the
// strides; the JVP of reduce_window_max (min) gathers the tangent where the
// operand is the window's first maximum (minimum): select_and_gather_add,
// whose transpose is select_and_scatter_add (max pooling's gradient) and
// back. Batching gives the batch axis a window of one.
#include <string>
#include <vector>

#include "graft/errors.h"
#include "ir/attr_access.h"
#include "ir/dtype.h"
#include "ops/rules.h"

namespace graft::ops {

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

// The attributes of one windowed node, to read, change and emit.
struct Window {
  ir::Ints window, strides, lo, hi, base, dilation;
  std::string select;  // "" for reduce_window_*

  explicit Window(const ir::Node& node)
      : window(ir::ints_attr(node, "window_dimensions")),
        strides(ir::ints_attr(node, "window_strides")),
        lo(ir::ints_attr(node, "padding_low")),
        hi(ir::ints_attr(node, "padding_high")),
        base(ir::ints_attr(node, "base_dilation")),
        dilation(ir::ints_attr(node, "window_dilation")) {
    if (node.attrs.has("select")) select = ir::attr<std::string>(node, "select");
  }

  ir::Attrs attrs() const {
    ir::Attrs a{{"base_dilation", base},       {"padding_high", hi},          {"padding_low", lo},
                {"window_dilation", dilation}, {"window_dimensions", window}, {"window_strides", strides}};
    if (!select.empty()) a.set("select", select);
    return a;
  }

  // The same windows with a dimension of one element inserted at dim (a batch axis).
  Window with_unit_dim(int64_t dim) const {
    Window w = *this;
    for (ir::Ints* v : {&w.window, &w.strides, &w.base, &w.dilation}) v->insert(v->begin() + dim, 1);
    for (ir::Ints* v : {&w.lo, &w.hi}) v->insert(v->begin() + dim, 0);
    return w;
  }
};

// select_and_gather_add of tangent t at operand x's selected elements.
ValueId gather(JvpCtx& c, const Window& w, ValueId t, ValueId x) {
  return c.add(Op::select_and_gather_add, {t, x}, w.attrs());
}

std::vector<BatchedValue> one_operand_batch(BatchCtx& c) {
  const int64_t dim = c.operands[0].dim;
  const Window w = Window(c.node()).with_unit_dim(dim);
  return {{c.add(c.node().op, {c.operands[0].value}, w.attrs()), dim}};
}

std::vector<BatchedValue> two_operand_batch(BatchCtx& c) {
  const int64_t dim = c.first_batched_dim();
  const Window w = Window(c.node()).with_unit_dim(dim);
  return {{c.add(c.node().op, {c.at(0, dim), c.at(1, dim)}, w.attrs()), dim}};
}

ir::IdList chooser_jvp(JvpCtx& c, const char* select) {
  if (c.tangents[0] == kZero) return {kZero};
  Window w(c.node());
  w.select = select;
  return {gather(c, w, c.tangents[0], c.primals[0])};
}

}  // namespace

// ---- reduce_window_sum

OutTypes reduce_window_sum_shape(const RuleCtx& c) { return reduce_window_shape(c); }

// JAX's _reduce_window_sum_transpose_rule: each operand element receives the
// cotangents of the windows that hold it: the cotangent dilated by the
// strides and padded as a convolution's lhs gradient, summed over windows
// stepping by the base dilation.
ir::IdList reduce_window_sum_transpose(TransposeCtx& c) {
  const ValueId ct = c.cotangents[0];
  if (ct == kZero) return {kZero};
  const Window w(c.node());
  const ir::ValueType x = c.operand_types[0];
  const Shape out = c.emit().type(ct).shape;
  const size_t rank = x.shape.size();
  ir::Ints lo(rank), hi(rank), interior(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t span = dilated(w.window[i], w.dilation[i]);
    lo[i] = span - w.lo[i] - 1;
    hi[i] = dilated(x.shape[i], w.base[i]) + span - 1 - dilated(out[i], w.strides[i]) - lo[i];
    interior[i] = w.strides[i] - 1;
  }
  const ValueId zero = c.zeros(ir::ValueType{x.dtype, {}});
  const ValueId padded =
      c.add(Op::pad, {ct, zero}, {{"padding_high", hi}, {"padding_interior", interior}, {"padding_low", lo}});
  Window t = w;
  t.strides = w.base;
  t.base.assign(rank, 1);
  t.lo.assign(rank, 0);
  t.hi.assign(rank, 0);
  return {c.add(Op::reduce_window_sum, {padded}, t.attrs())};
}

std::vector<BatchedValue> reduce_window_sum_batch(BatchCtx& c) { return one_operand_batch(c); }

// ---- reduce_window_max

OutTypes reduce_window_max_shape(const RuleCtx& c) { return reduce_window_shape(c); }

ir::IdList reduce_window_max_jvp(JvpCtx& c) { return chooser_jvp(c, "ge"); }

std::vector<BatchedValue> reduce_window_max_batch(BatchCtx& c) { return one_operand_batch(c); }

// ---- reduce_window_min

OutTypes reduce_window_min_shape(const RuleCtx& c) { return reduce_window_shape(c); }

ir::IdList reduce_window_min_jvp(JvpCtx& c) { return chooser_jvp(c, "le"); }

std::vector<BatchedValue> reduce_window_min_batch(BatchCtx& c) { return one_operand_batch(c); }

// ---- select_and_gather_add

OutTypes select_and_gather_add_shape(const RuleCtx& c) {
  check_select(c);
  const ValueType &t = c.input(0), &x = c.input(1);
  if (t != x) c.shape_error("tangent " + type_str(t) + " and operand " + type_str(x) + " must have one type");
  return {ValueType{t.dtype, windowed_shape(c, x.shape)}};
}

// Each window's cotangent goes back to the element its tangent came from.
ir::IdList select_and_gather_add_transpose(TransposeCtx& c) {
  if (c.unknown[1]) throw UnsupportedError("transpose: select_and_gather_add is not linear in its operand");
  const ValueId ct = c.cotangents[0];
  if (ct == kZero) return {kZero, kZero};
  return {c.add(Op::select_and_scatter_add, {ct, c.operands[1]}, Window(c.node()).attrs()), kZero};
}

std::vector<BatchedValue> select_and_gather_add_batch(BatchCtx& c) { return two_operand_batch(c); }

// ---- select_and_scatter_add

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

// Each window reads back the cotangent of the element it scattered into.
ir::IdList select_and_scatter_add_transpose(TransposeCtx& c) {
  if (c.unknown[1]) throw UnsupportedError("transpose: select_and_scatter_add is not linear in its operand");
  const ValueId ct = c.cotangents[0];
  if (ct == kZero) return {kZero, kZero};
  return {gather(c.emit(), Window(c.node()), ct, c.operands[1]), kZero};
}

std::vector<BatchedValue> select_and_scatter_add_batch(BatchCtx& c) { return two_operand_batch(c); }

}  // namespace graft::ops
