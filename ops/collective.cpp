// The collective op family: each op's shape/dtype rule, JVP, transpose and
// batching rule side by side, op by op in ops.def order (the rules an op
// takes from ops.def's standard columns are not repeated here).
//
// Shape/dtype rules of collectives over a named axis (`axis_name`). The size
// of the named axis is not visible in operand shapes, so ops whose result
// shape depends on it carry `axis_size` (as JAX's all_gather does).
//
// psum, pmax, pmin: same type.      ppermute: same type; `perm` is a flat
// list of (source, destination) pairs, sources and destinations unique.
// all_gather: `axis`, `tiled`: stacked inserts a new axis of axis_size at
// `axis`; tiled multiplies axis `axis` by axis_size.
// psum_scatter: the inverse of all_gather's shape (its transpose).
// all_to_all: `split_axis` splits into axis_size chunks (chunk j goes to
// replica j), the chunks received are concatenated along `concat_axis`:
// split_axis shrinks by axis_size, concat_axis grows by it (JAX's tiled form;
// the untiled form is a reshape around it, api/collectives.cpp).
// axis_index: i32[], this replica's position along the axis.
//
// Transform rules of collectives over a named axis. Each replica along the axis holds its own x_i:
//   psum          y_j = sum_i x_i          (self-adjoint: transpose is psum)
//   all_gather    y_j = [x_0, ..., x_n-1]  (transpose: psum_scatter)
//   psum_scatter  y_j = (sum_i x_i)[j]     (transpose: all_gather)
//   ppermute      y_d = x_s per pair       (transpose: the inverse pairs)
//   all_to_all    y_j = [chunk j of x_i]_i (transpose: split and concat axes swapped)
// pmax/pmin are not linear: the tangent comes from the replicas that attain
// the extreme, averaged when several tie (as reduce_max's rule does).
//
// Batching rules (vmap)
//
// A collective over the vmap's own axis (axis_name == the vmap's name) acts
// across the examples, i.e. along the batch axis:
//   psum / pmax / pmin  reduce the batch axis; the result is the same for
//                       every example, so it is returned unbatched (an
//                       unbatched operand: psum is x * axis_size, pmax/pmin x).
//   all_gather          the batched operand with its batch axis moved to
//                       `axis` (tiled: merged into it); unbatched.
//   psum_scatter        example j gets slice j of the sum: the sum's axis
//                       `axis` (tiled: split into (axis_size, rest)) is the
//                       batch axis of the result.
//   ppermute            example d gets example s's value for each (s, d), a
//                       gather along the batch axis; examples that receive
//                       nothing get zeros.
//   all_to_all          example r gets chunk r of every example's split axis,
//                       concatenated along concat_axis: a reshape and a
//                       transpose of the batched operand.
//   axis_index          iota over the batch axis.
// A collective over another axis (an outer vmap's or pmap's) runs on the
// batched operand, its axis attributes renumbered past the batch axis.
#include <cstring>

#include "graft/errors.h"
#include "ir/all_to_all_layout.h"
#include "ir/attr_access.h"
#include "ops/rules.h"

namespace graft::ops {

namespace {

using Types = std::vector<ValueType>;

void check_name(const RuleCtx& c) {
  if (c.attr_string("axis_name").empty()) c.shape_error("axis_name must not be empty");
}

int64_t axis_size(const RuleCtx& c) {
  int64_t n = c.attr_int("axis_size");
  if (n < 1 || n > (int64_t{1} << 20)) c.shape_error("axis_size " + std::to_string(n) + " is out of range");
  return n;
}

OutTypes same_type(const RuleCtx& c) {
  check_name(c);
  check_accepted_dtype(c, c.input(0).dtype);  // psum: numbers; pmax, pmin: ordered (no complex, whose max is undefined)
  return {c.input(0)};
}

using Out = ir::IdList;

ir::Attrs axis_only(const ir::Node& node) { return {{"axis_name", ir::attr<std::string>(node, "axis_name")}}; }

Out extreme_rule(JvpCtx& c) {
  if (c.tangents[0] == kZero) return {kZero};
  ValueId x = c.primals[0];
  ValueId hit = c.add(Op::eq, {x, c.outputs[0]});
  ValueId weights = c.add(Op::convert_element_type, {hit}, {{"new_dtype", c.type(x).dtype}});
  ir::Attrs sum_attrs = axis_only(c.node());
  ValueId count = c.add(Op::psum, {weights}, sum_attrs);
  ValueId picked = c.add(Op::psum, {c.add(Op::mul, {c.tangents[0], weights})}, sum_attrs);
  return {c.add(Op::div, {picked, count})};
}

// all_gather and psum_scatter share attributes (axis_name, axis_size, axis,
// tiled) and are each other's transpose.
template <Op Other>
ir::IdList swap_transpose(TransposeCtx& c) {
  if (c.cotangents[0] == kZero) return {kZero};
  return {c.add(Other, {c.cotangents[0]}, c.attrs())};
}

using Batched = std::vector<BatchedValue>;

bool over_vmap_axis(const BatchCtx& c) {
  return !c.axis_name.empty() && ir::attr<std::string>(c.node(), "axis_name") == c.axis_name;
}

void check_axis_size(const BatchCtx& c) {
  const int64_t n = ir::int_attr(c.node(), "axis_size");
  if (n != c.axis_size)
    throw ShapeError(std::string(ir::op_name(c.node().op)) + ": axis_size " + std::to_string(n) + " of axis '" +
                     c.axis_name + "' differs from the vmapped size " + std::to_string(c.axis_size));
}

// An integer literal of shape [values.size()] as a constant node.
ValueId int_vector(BatchCtx& c, DType dtype, const std::vector<int64_t>& values) {
  const int64_t n = static_cast<int64_t>(values.size());
  ir::Literal lit{ir::ValueType{dtype, {n}}, {}};
  for (int64_t v : values) {
    if (dtype == DType::bool_) {
      lit.bytes.push_back(v != 0);
    } else {
      const int32_t x = static_cast<int32_t>(v);
      uint8_t bytes[sizeof x];
      std::memcpy(bytes, &x, sizeof x);
      lit.bytes.insert(lit.bytes.end(), bytes, bytes + sizeof x);
    }
  }
  return c.add(Op::constant, {}, {{"value", std::make_shared<const ir::Literal>(std::move(lit))}});
}

Batched pass_through(BatchCtx& c) {
  return {{c.add(c.node().op, {c.operands[0].value}, c.attrs()), c.operands[0].dim}};
}

Batched extreme_batch(BatchCtx& c) {
  if (!over_vmap_axis(c)) return pass_through(c);
  const BatchedValue& x = c.operands[0];
  if (x.dim == kNotBatched) return {{x.value, kNotBatched}};
  const Op reduce = c.node().op == Op::pmax ? Op::reduce_max : Op::reduce_min;
  return {{c.add(reduce, {x.value}, {{"axes", ir::Ints{x.dim}}}), kNotBatched}};
}

// The `axis` attribute, negative ones counted from the end of a rank-`rank` shape.
int64_t axis_attr(const BatchCtx& c, int64_t rank) {
  const int64_t axis = ir::int_attr(c.node(), "axis");
  return axis < 0 ? axis + rank : axis;
}

}  // namespace

// ---- psum

OutTypes psum_shape(const RuleCtx& c) { return same_type(c); }

ir::IdList psum_transpose(TransposeCtx& c) {
  if (c.cotangents[0] == kZero) return {kZero};
  return {c.add(Op::psum, {c.cotangents[0]}, c.attrs())};
}

std::vector<BatchedValue> psum_batch(BatchCtx& c) {
  if (!over_vmap_axis(c)) return pass_through(c);
  const BatchedValue& x = c.operands[0];
  if (x.dim != kNotBatched) return {{c.add(Op::reduce_sum, {x.value}, {{"axes", ir::Ints{x.dim}}}), kNotBatched}};
  const ir::ValueType t = c.type(x.value);
  ValueId n = emit_full(c.builder(), static_cast<double>(c.axis_size), t, &c.node());
  return {{c.add(Op::mul, {x.value, n}), kNotBatched}};
}

// ---- pmax

OutTypes pmax_shape(const RuleCtx& c) { return same_type(c); }

ir::IdList pmax_jvp(JvpCtx& c) { return extreme_rule(c); }

std::vector<BatchedValue> pmax_batch(BatchCtx& c) { return extreme_batch(c); }

// ---- pmin

OutTypes pmin_shape(const RuleCtx& c) { return same_type(c); }

ir::IdList pmin_jvp(JvpCtx& c) { return extreme_rule(c); }

std::vector<BatchedValue> pmin_batch(BatchCtx& c) { return extreme_batch(c); }

// ---- all_gather

OutTypes all_gather_shape(const RuleCtx& c) {
  check_name(c);
  const ValueType& x = c.input(0);
  int64_t n = axis_size(c);
  bool tiled = c.attr_bool("tiled");
  Shape out = x.shape;
  if (tiled) {
    int ax = c.axis(c.attr_int("axis"), x.rank(), "axis");
    out[ax] *= n;
  } else {
    int ax = c.axis(c.attr_int("axis"), x.rank() + 1, "axis");
    out.insert(out.begin() + ax, n);
  }
  c.check_shape(out, "result");
  return {ValueType{x.dtype, out}};
}

ir::IdList all_gather_transpose(TransposeCtx& c) { return swap_transpose<Op::psum_scatter>(c); }

std::vector<BatchedValue> all_gather_batch(BatchCtx& c) {
  const bool tiled = ir::int_attr(c.node(), "tiled") != 0;
  const int64_t axis = axis_attr(c, c.unbatched_type(0).rank() + (tiled ? 0 : 1));
  const int64_t dim = c.operands[0].dim;
  if (!over_vmap_axis(c)) {
    ir::Attrs attrs = c.attrs();
    if (tiled) {
      attrs.set("axis", past_batch_axis(axis, dim));
      return {{c.add(Op::all_gather, {c.operands[0].value}, attrs), dim}};
    }
    // The new axis lands before the batch axis when axis <= dim.
    attrs.set("axis", axis <= dim ? axis : axis + 1);
    return {{c.add(Op::all_gather, {c.operands[0].value}, attrs), axis <= dim ? dim + 1 : dim}};
  }
  check_axis_size(c);
  const ir::ValueType t = c.unbatched_type(0);
  ValueId x = c.at(0, axis);
  if (!tiled) return {{x, kNotBatched}};
  ir::Ints sizes(t.shape.begin(), t.shape.end());
  sizes[axis] *= c.axis_size;
  return {{c.add(Op::reshape, {x}, {{"new_sizes", sizes}}), kNotBatched}};
}

// ---- psum_scatter

OutTypes psum_scatter_shape(const RuleCtx& c) {
  check_name(c);
  const ValueType& x = c.input(0);
  if (x.dtype == DType::bool_) c.dtype_error("needs a numeric operand, got bool");
  int64_t n = axis_size(c);
  int ax = c.axis(c.attr_int("axis"), x.rank(), "axis");
  Shape out = x.shape;
  if (c.attr_bool("tiled")) {
    if (out[ax] % n != 0)
      c.shape_error("axis " + std::to_string(ax) + " of size " + std::to_string(out[ax]) +
                    " does not divide by axis_size " + std::to_string(n));
    out[ax] /= n;
  } else {
    if (out[ax] != n) c.shape_error("axis " + std::to_string(ax) + " must have axis_size " + std::to_string(n));
    out.erase(out.begin() + ax);
  }
  return {ValueType{x.dtype, out}};
}

ir::IdList psum_scatter_transpose(TransposeCtx& c) { return swap_transpose<Op::all_gather>(c); }

std::vector<BatchedValue> psum_scatter_batch(BatchCtx& c) {
  const int64_t axis = axis_attr(c, c.unbatched_type(0).rank());
  const bool tiled = ir::int_attr(c.node(), "tiled") != 0;
  const int64_t dim = c.operands[0].dim;
  if (!over_vmap_axis(c)) {
    ir::Attrs attrs = c.attrs();
    attrs.set("axis", past_batch_axis(axis, dim));
    return {{c.add(Op::psum_scatter, {c.operands[0].value}, attrs), !tiled && axis < dim ? dim - 1 : dim}};
  }
  check_axis_size(c);
  const ir::ValueType t = c.unbatched_type(0);
  ValueId sum;
  if (dim != kNotBatched) {
    sum = c.add(Op::reduce_sum, {c.operands[0].value}, {{"axes", ir::Ints{dim}}});
  } else {
    ValueId n = emit_full(c.builder(), static_cast<double>(c.axis_size), t, &c.node());
    sum = c.add(Op::mul, {c.operands[0].value, n});
  }
  if (!tiled) return {{sum, axis}};  // axis `axis` has axis_size entries, one per example
  ir::Ints sizes(t.shape.begin(), t.shape.end());
  sizes[axis] /= c.axis_size;
  sizes.insert(sizes.begin() + axis, c.axis_size);
  return {{c.add(Op::reshape, {sum}, {{"new_sizes", sizes}}), axis}};
}

// ---- all_to_all

OutTypes all_to_all_shape(const RuleCtx& c) {
  check_name(c);
  const ValueType& x = c.input(0);
  const int64_t n = axis_size(c);
  const int split = c.axis(c.attr_int("split_axis"), x.rank(), "split_axis");
  const int concat = c.axis(c.attr_int("concat_axis"), x.rank(), "concat_axis");
  Shape out = x.shape;
  if (out[split] % n != 0)
    c.shape_error("split_axis " + std::to_string(split) + " of size " + std::to_string(out[split]) +
                  " does not divide by axis_size " + std::to_string(n));
  out[split] /= n;
  out[concat] *= n;
  return {ValueType{x.dtype, out}};
}

ir::IdList all_to_all_transpose(TransposeCtx& c) {
  if (c.cotangents[0] == kZero) return {kZero};
  ir::Attrs attrs = c.attrs();
  attrs.set("split_axis", ir::int_attr(c.node(), "concat_axis"));
  attrs.set("concat_axis", ir::int_attr(c.node(), "split_axis"));
  return {c.add(Op::all_to_all, {c.cotangents[0]}, attrs)};
}

std::vector<BatchedValue> all_to_all_batch(BatchCtx& c) {
  const ir::ValueType t = c.unbatched_type(0);
  const int64_t split = ir::int_attr(c.node(), "split_axis");
  const int64_t concat = ir::int_attr(c.node(), "concat_axis");
  const int64_t dim = c.operands[0].dim;
  if (!over_vmap_axis(c)) {
    if (dim == kNotBatched) return pass_through(c);
    ir::Attrs attrs = c.attrs();
    attrs.set("split_axis", past_batch_axis(split, dim));
    attrs.set("concat_axis", past_batch_axis(concat, dim));
    return {{c.add(Op::all_to_all, {c.operands[0].value}, attrs), dim}};
  }
  check_axis_size(c);
  const ir::AllToAllLayout l = ir::all_to_all_layout(t.shape, split, concat, c.axis_size);
  ValueId x = c.add(Op::reshape, {c.at(0, 0)}, {{"new_sizes", ir::Ints(l.split_stack)}});
  x = c.add(Op::transpose, {x}, {{"permutation", ir::Ints(l.permutation)}});
  ir::Ints out_sizes{c.axis_size};
  out_sizes.insert(out_sizes.end(), l.result.begin(), l.result.end());
  return {{c.add(Op::reshape, {x}, {{"new_sizes", out_sizes}}), 0}};
}

// ---- ppermute

OutTypes ppermute_shape(const RuleCtx& c) {
  check_name(c);
  const Ints& perm = c.attr_ints("perm");
  if (perm.size() % 2 != 0) c.shape_error("perm must hold (source, destination) pairs");
  std::vector<int64_t> sources, dests;
  for (size_t i = 0; i < perm.size(); i += 2) {
    if (perm[i] < 0 || perm[i + 1] < 0) c.shape_error("perm entries must be non-negative");
    for (int64_t s : sources)
      if (s == perm[i]) c.shape_error("source " + std::to_string(s) + " appears twice in perm");
    for (int64_t d : dests)
      if (d == perm[i + 1]) c.shape_error("destination " + std::to_string(d) + " appears twice in perm");
    sources.push_back(perm[i]);
    dests.push_back(perm[i + 1]);
  }
  return {c.input(0)};
}

ir::IdList ppermute_transpose(TransposeCtx& c) {
  if (c.cotangents[0] == kZero) return {kZero};
  ir::Ints perm = ir::attr<ir::Ints>(c.node(), "perm");
  for (size_t i = 0; i + 1 < perm.size(); i += 2) std::swap(perm[i], perm[i + 1]);
  return {c.add(Op::ppermute, {c.cotangents[0]},
                {{"axis_name", ir::attr<std::string>(c.node(), "axis_name")}, {"perm", perm}})};
}

std::vector<BatchedValue> ppermute_batch(BatchCtx& c) {
  if (!over_vmap_axis(c)) return pass_through(c);
  const ir::Ints& perm = ir::attr<ir::Ints>(c.node(), "perm");
  std::vector<int64_t> source(static_cast<size_t>(c.axis_size), 0), receives(static_cast<size_t>(c.axis_size), 0);
  for (size_t i = 0; i + 1 < perm.size(); i += 2) {
    if (perm[i] >= c.axis_size || perm[i + 1] >= c.axis_size)
      throw ShapeError("ppermute: pair (" + std::to_string(perm[i]) + ", " + std::to_string(perm[i + 1]) +
                       ") is out of range for axis '" + c.axis_name + "' of size " + std::to_string(c.axis_size));
    source[static_cast<size_t>(perm[i + 1])] = perm[i];
    receives[static_cast<size_t>(perm[i + 1])] = 1;
  }
  // Batched (an unbatched operand broadcast in), the batch axis where it is.
  const int64_t dim = c.operands[0].dim == kNotBatched ? 0 : c.operands[0].dim;
  ValueId x = c.at(0, dim);
  const ir::ValueType t = c.type(x);
  bool identity = true, all_receive = true;
  for (int64_t d = 0; d < c.axis_size; ++d) {
    identity = identity && source[static_cast<size_t>(d)] == d;
    all_receive = all_receive && receives[static_cast<size_t>(d)];
  }
  ValueId y = x;
  if (!identity && c.operands[0].dim != kNotBatched) {  // an unbatched x is alike in every example
    ValueId idx = int_vector(c, DType::i32, source);
    y = c.add(Op::gather, {x, idx}, {{"axis", dim}, {"batch_dims", int64_t{0}}});
  }
  if (!all_receive) {
    ValueId mask = int_vector(c, DType::bool_, receives);
    if (t.rank() > 1)
      mask =
          c.add(Op::broadcast_in_dim, {mask}, {{"shape", ir::Ints(t.shape)}, {"broadcast_dimensions", ir::Ints{dim}}});
    y = c.add(Op::select, {mask, y, emit_full(c.builder(), 0.0, t, &c.node())});
  }
  return {{y, dim}};
}

// ---- axis_index

OutTypes axis_index_shape(const RuleCtx& c) {
  check_name(c);
  return {ValueType{DType::i32, {}}};
}

std::vector<BatchedValue> axis_index_batch(BatchCtx& c) {
  if (!over_vmap_axis(c)) return {{c.add(Op::axis_index, {}, c.attrs()), kNotBatched}};
  return {
      {c.add(Op::iota, {}, {{"dtype", DType::i32}, {"shape", ir::Ints{c.axis_size}}, {"dimension", int64_t{0}}}), 0}};
}

}  // namespace graft::ops
