// The reduce op family: each op's shape/dtype rule, JVP, transpose and
// batching rule side by side, op by op in ops.def order (the rules an op
// takes from ops.def's standard columns are not repeated here).
//
// Shape/dtype rules of reductions (over a set of `axes`), arg-reductions
// (over one `axis`, yielding `index_dtype`) and cumulative scans (one `axis`).
//
// Transform rules of reductions and cumulative scans.
#include <algorithm>

#include "ir/attr_access.h"
#include "ir/dtype.h"
#include "ops/rules.h"

namespace graft::ops {

namespace {

using Out = ir::IdList;

// The axes of a rank-`rank` operand that a reduction over `axes` keeps.
ir::Ints kept_axes(int64_t rank, const ir::Ints& axes) {
  ir::Ints kept;
  for (int64_t d = 0; d < rank; ++d)
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) kept.push_back(d);
  return kept;
}

// The result broadcast back over the reduced axes (for comparisons with x).
ValueId broadcast_back(JvpCtx& c, ValueId reduced, ValueId x) {
  const ir::ValueType xt = c.type(x);  // a copy: adding nodes may move the builder's type table
  ir::Ints kept = kept_axes(xt.rank(), ir::attr<ir::Ints>(c.node(), "axes"));
  return c.add(Op::broadcast_in_dim, {reduced}, {{"shape", ir::Ints(xt.shape)}, {"broadcast_dimensions", kept}});
}

// max/min: the tangent averaged over the positions that attain the extreme.
Out extreme_rule(JvpCtx& c) {
  if (c.tangents[0] == kZero) return {kZero};
  ValueId x = c.primals[0];
  ValueId hit = c.add(Op::eq, {x, broadcast_back(c, c.outputs[0], x)});
  ValueId weights = c.add(Op::convert_element_type, {hit}, {{"new_dtype", c.type(x).dtype}});
  ValueId count = c.add(Op::reduce_sum, {weights}, c.attrs());
  ValueId picked = c.add(Op::reduce_sum, {c.add(Op::mul, {c.tangents[0], weights})}, c.attrs());
  return {c.add(Op::div, {picked, count})};
}

// cummax/cummin: each output is the input at the latest position so far
// that set the running extreme (where x equals the running result); its
// tangent is the tangent there.
Out cumulative_extreme_rule(JvpCtx& c) {
  if (c.tangents[0] == kZero) return {kZero};
  ValueId x = c.primals[0], y = c.outputs[0];
  int64_t axis = ir::attr<int64_t>(c.node(), "axis");
  int64_t reverse = ir::attr<int64_t>(c.node(), "reverse");
  const ir::ValueType xt = c.type(x);
  ValueId iota = c.add(Op::iota, {}, {{"dtype", DType::i32}, {"shape", ir::Ints(xt.shape)}, {"dimension", axis}});
  ValueId record = c.add(Op::eq, {x, y});
  // Forward scans take the largest such position so far, reverse scans the smallest.
  ValueId none = c.scalar_like(reverse ? static_cast<double>(xt.shape[axis]) : -1.0, iota);
  ValueId positions = c.add(Op::select, {record, iota, none});
  ValueId latest = c.add(reverse ? Op::cummin : Op::cummax, {positions}, {{"axis", axis}, {"reverse", reverse}});
  return {c.take_along_axis(c.tangents[0], latest, axis)};
}

}  // namespace

// ---- reduce_sum

ir::IdList reduce_sum_transpose(TransposeCtx& c) {
  ValueId ct = c.cotangents[0];
  if (ct == kZero) return {kZero};
  const ir::ValueType& x = c.operand_types[0];
  ir::Ints kept = kept_axes(x.rank(), ir::attr<ir::Ints>(c.node(), "axes"));
  return {c.add(Op::broadcast_in_dim, {ct}, {{"shape", ir::Ints(x.shape)}, {"broadcast_dimensions", kept}})};
}

// ---- reduce_max

ir::IdList reduce_max_jvp(JvpCtx& c) { return extreme_rule(c); }

// ---- reduce_min

ir::IdList reduce_min_jvp(JvpCtx& c) { return extreme_rule(c); }

// ---- reduce_prod

// prod: the tangent is sum_i t_i * prod_{j != i} x_j. The exclusive products
// come from cumulative products from the left and the right (no division,
// so zeros in x are handled exactly): the reduced axes are moved last and
// flattened to one axis of length n.
ir::IdList reduce_prod_jvp(JvpCtx& c) {
  if (c.tangents[0] == kZero) return {kZero};
  ValueId x = c.primals[0];
  const ir::ValueType xt = c.type(x);
  const ir::Ints axes = ir::attr<ir::Ints>(c.node(), "axes");
  ir::Ints perm, kept_shape;
  int64_t n = 1;
  for (int64_t d = 0; d < xt.rank(); ++d)
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) {
      perm.push_back(d);
      kept_shape.push_back(xt.shape[d]);
    }
  for (int64_t a : axes) {
    perm.push_back(a);
    n *= xt.shape[a];
  }
  if (n == 0) return {kZero};
  int64_t k = 1;
  for (int64_t d : kept_shape) k *= d;
  auto flat = [&](ValueId v) {
    return c.add(Op::reshape, {c.add(Op::transpose, {v}, {{"permutation", perm}})}, {{"new_sizes", ir::Ints{k, n}}});
  };
  ValueId x2 = flat(x), t2 = flat(c.tangents[0]);
  auto cumprod = [&](ValueId v, int64_t reverse) {
    return c.add(Op::cumprod, {v}, {{"axis", int64_t{1}}, {"reverse", reverse}});
  };
  auto cols = [&](ValueId v, int64_t lo, int64_t hi) {
    return c.add(Op::slice, {v},
                 {{"start_indices", ir::Ints{0, lo}}, {"limit_indices", ir::Ints{k, hi}}, {"strides", ir::Ints{1, 1}}});
  };
  ValueId ones_col = cols(c.scalar_like(1, x2), 0, 1);
  ValueId left = c.add(Op::concatenate, {ones_col, cols(cumprod(x2, 0), 0, n - 1)}, {{"dimension", int64_t{1}}});
  ValueId right = c.add(Op::concatenate, {cols(cumprod(x2, 1), 1, n), ones_col}, {{"dimension", int64_t{1}}});
  ValueId others = c.add(Op::mul, {left, right});
  ValueId summed = c.add(Op::reduce_sum, {c.add(Op::mul, {t2, others})}, {{"axes", ir::Ints{1}}});
  return {c.add(Op::reshape, {summed}, {{"new_sizes", kept_shape}})};
}

// ---- cumsum

// cumsum's transpose is the cumulative sum running the other way.
ir::IdList cumsum_transpose(TransposeCtx& c) {
  ValueId ct = c.cotangents[0];
  if (ct == kZero) return {kZero};
  ir::Attrs attrs = c.attrs();
  attrs.set("reverse", int64_t{1 - ir::int_attr(c.node(), "reverse")});
  return {c.add(Op::cumsum, {ct}, attrs)};
}

// ---- cumprod

// cumprod: y_i = prod_{j<=i} x_j, so dy_i = sum_{j<=i} t_j * prod_{k<=i, k!=j} x_k
// (j >= i when reversed). The exclusive products come from one cumprod over
// an n x n copy of x with the diagonal set to one: exact where x has zeros
// (no division), at O(n^2) work per scanned row. The scanned axis is moved
// last and the others flattened, so the rule works on [k, n].
ir::IdList cumprod_jvp(JvpCtx& c) {
  if (c.tangents[0] == kZero) return {kZero};
  ValueId x = c.primals[0];
  const ir::ValueType xt = c.type(x);
  const int64_t axis = ir::attr<int64_t>(c.node(), "axis");
  const int64_t reverse = ir::attr<int64_t>(c.node(), "reverse");
  const int64_t n = xt.shape[axis];
  if (n == 0) return {kZero};
  ir::Ints perm, moved_shape;
  int64_t k = 1;
  for (int64_t d = 0; d < xt.rank(); ++d)
    if (d != axis) {
      perm.push_back(d);
      moved_shape.push_back(xt.shape[d]);
      k *= xt.shape[d];
    }
  perm.push_back(axis);
  moved_shape.push_back(n);
  auto flat = [&](ValueId v) {
    return c.add(Op::reshape, {c.add(Op::transpose, {v}, {{"permutation", perm}})}, {{"new_sizes", ir::Ints{k, n}}});
  };
  const ir::Ints cube{k, n, n};  // [row, j (the factor left out), i (the output position)]
  auto spread = [&](ValueId v, ir::Ints dims) {
    return c.add(Op::broadcast_in_dim, {v}, {{"shape", cube}, {"broadcast_dimensions", std::move(dims)}});
  };
  auto iota = [&](int64_t dim) {
    return c.add(Op::iota, {}, {{"dtype", DType::i32}, {"shape", cube}, {"dimension", dim}});
  };
  ValueId x3 = spread(flat(x), {0, 2});
  ValueId j = iota(1), i = iota(2);
  ValueId factors = c.add(Op::select, {c.add(Op::eq, {j, i}), c.scalar_like(1, x3), x3});
  ValueId others = c.add(Op::cumprod, {factors}, {{"axis", int64_t{2}}, {"reverse", reverse}});
  ValueId in_prefix = c.add(reverse ? Op::ge : Op::le, {j, i});
  ValueId weights = c.add(Op::select, {in_prefix, others, c.zeros_like(others)});
  ValueId t3 = spread(flat(c.tangents[0]), {0, 1});
  ValueId summed = c.add(Op::reduce_sum, {c.add(Op::mul, {t3, weights})}, {{"axes", ir::Ints{1}}});
  ir::Ints back(perm.size());
  for (size_t d = 0; d < perm.size(); ++d) back[perm[d]] = static_cast<int64_t>(d);
  ValueId moved = c.add(Op::reshape, {summed}, {{"new_sizes", moved_shape}});
  return {c.add(Op::transpose, {moved}, {{"permutation", back}})};
}

// ---- cummax

ir::IdList cummax_jvp(JvpCtx& c) { return cumulative_extreme_rule(c); }

// ---- cummin

ir::IdList cummin_jvp(JvpCtx& c) { return cumulative_extreme_rule(c); }

namespace {

using Types = std::vector<ValueType>;

Shape reduced_shape(const RuleCtx& c, const Shape& in, const Ints& axes) {
  int rank = static_cast<int>(in.size());
  std::vector<bool> drop(rank, false);
  for (int64_t a : axes) {
    int ax = c.axis(a, rank, "reduction axis");
    if (drop[ax]) c.shape_error("reduction axis " + std::to_string(a) + " is repeated in " + shape_str(axes));
    drop[ax] = true;
  }
  Shape out;
  for (int i = 0; i < rank; ++i)
    if (!drop[i]) out.push_back(in[i]);
  return out;
}

}  // namespace

// REDUCES_AXES: the reductions.
OutTypes reduces_axes_rule(const RuleCtx& c) {
  DType d = c.input(0).dtype;
  check_accepted_dtype(c, d);
  return {ValueType{d, reduced_shape(c, c.input(0).shape, c.attr_ints("axes"))}};
}

// REDUCES_AXIS: argmax and argmin, yielding `index_dtype`.
OutTypes reduces_axis_rule(const RuleCtx& c) {
  const ValueType& x = c.input(0);
  check_accepted_dtype(c, x.dtype);
  int ax = c.axis(c.attr_int("axis"), x.rank(), "axis");
  if (x.shape[ax] == 0) c.shape_error("cannot take an arg-reduction over an empty axis");
  DType index = c.attr_dtype("index_dtype");
  if (index != DType::i32 && index != DType::i64)
    c.dtype_error(std::string("index_dtype must be i32 or i64, got ") + dtype_name(index));
  Shape out = x.shape;
  out.erase(out.begin() + ax);
  return {ValueType{index, out}};
}

// SCANS_AXIS: the cumulative ops.
OutTypes scans_axis_rule(const RuleCtx& c) {
  const ValueType& x = c.input(0);
  c.axis(c.attr_int("axis"), x.rank(), "axis");
  c.attr_bool("reverse");
  check_accepted_dtype(c, x.dtype);
  return {x};
}

// Batching: the standard rules BATCH_AXES and BATCH_AXIS
// Reductions over `axes` keep the batch axis where it is; the axes shift past it.
std::vector<BatchedValue> over_axes_batch(BatchCtx& c) {
  const int64_t dim = c.operands[0].dim;
  ir::Attrs attrs = c.attrs();
  ir::Ints axes = ir::ints_attr(c.node(), "axes");
  int64_t before = 0;
  for (int64_t& a : axes) {
    if (a < dim) ++before;
    a = past_batch_axis(a, dim);
  }
  attrs.set("axes", axes);
  return {{c.add(c.node().op, {c.operands[0].value}, attrs), dim - before}};
}

// argmax/argmin remove one `axis`; cumulative scans keep it.
std::vector<BatchedValue> over_axis_batch(BatchCtx& c) {
  const int64_t dim = c.operands[0].dim;
  ir::Attrs attrs = c.attrs();
  const int64_t axis = ir::int_attr(c.node(), "axis");
  attrs.set("axis", past_batch_axis(axis, dim));
  const bool removes = ir::op_info(c.node().op).shape_rule == ir::ShapeRuleKind::reduces_axis;
  return {{c.add(c.node().op, {c.operands[0].value}, attrs), removes && axis < dim ? dim - 1 : dim}};
}

}  // namespace graft::ops
