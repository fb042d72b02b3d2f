// The indexing op family: each op's shape/dtype rule, JVP, transpose and
// batching rule side by side, op by op in ops.def order (the rules an op
// takes from ops.def's standard columns are not repeated here).
//
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
//
// Transform rules of indexing: linear in the data operands, constant in the
// indices (ops.def's LINEAR_IN gives their JVPs).
#include <algorithm>

#include "ir/attr_access.h"
#include "ir/dtype.h"
#include "ops/rules.h"

namespace graft::ops {

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
  if (axis < b)
    c.shape_error("axis " + std::to_string(axis) + " must not be a batch dimension (batch_dims " + std::to_string(b) +
                  ")");
  for (int i = 0; i < b; ++i)
    if (x.shape[i] != idx.shape[i])
      c.shape_error("batch dimension " + std::to_string(i) + " differs between operand and indices");
  Shape out(x.shape.begin(), x.shape.begin() + axis);
  out.insert(out.end(), idx.shape.begin() + b, idx.shape.end());
  out.insert(out.end(), x.shape.begin() + axis + 1, x.shape.end());
  c.check_shape(out, "result");
  return out;
}

ValueId full(BatchCtx& c, double value, DType dtype, Shape shape) {
  return emit_full(c.builder(), value, ir::ValueType{dtype, std::move(shape)}, &c.node());
}

ValueId broadcast(BatchCtx& c, ValueId v, Shape shape, ir::Ints dims) {
  return c.add(Op::broadcast_in_dim, {v},
               {{"shape", ir::Ints(std::move(shape))}, {"broadcast_dimensions", std::move(dims)}});
}

// Where the batch axis of the operand ends up in a gather's result (also the
// layout of scatter_add's updates) when it sits at p of the batched operand,
// outside the paired batch_dims: before the gathered axis it stays at p;
// after it, it follows the index axes (`mid` of them) that replace that axis.
int64_t result_pos(int64_t p, int64_t axis, int64_t mid) { return p <= axis ? p : p - 1 + mid; }

// A start index (scalar, or one per example as [B]) clamped as the kernels
// clamp it, so that a window of `size` fits in an axis of `n`.
ValueId clamp_start(BatchCtx& c, ValueId s, int64_t n, int64_t size) {
  const ir::ValueType t = c.type(s);
  ValueId lo = c.add(Op::max, {s, full(c, 0, t.dtype, t.shape)});
  return c.add(Op::min, {lo, full(c, static_cast<double>(n - size), t.dtype, t.shape)});
}

bool any_index_batched(const BatchCtx& c, size_t first) {
  for (size_t i = first; i < c.operands.size(); ++i)
    if (c.operands[i].dim != kNotBatched) return true;
  return false;
}

}  // namespace

// ---- dynamic_slice

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

ir::IdList dynamic_slice_transpose(TransposeCtx& c) {
  ValueId ct = c.cotangents[0];
  ir::IdList out(c.operand_types.size(), kZero);
  if (ct == kZero) return out;
  std::vector<ValueId> args = {c.zeros(c.operand_types[0]), ct};
  for (size_t i = 1; i < c.operands.size(); ++i) args.push_back(c.operands[i]);
  out[0] = c.add(Op::dynamic_update_slice, args);
  return out;
}

// dynamic_slice. Unbatched start indices: one dynamic_slice, the batch axis
// taken whole (start 0). Batched start indices (each [B]): the axes with
// unbatched starts are cut by one dynamic_slice, then each axis with batched
// starts by one gather of clamp(start[b]) + iota(size) per example (paired on
// the batch axis), so every example's window is clamped on its own.
std::vector<BatchedValue> dynamic_slice_batch(BatchCtx& c) {
  const BatchedValue x = c.operands[0];
  const Shape n = c.unbatched_type(0).shape;
  const ir::Ints sizes = ir::ints_attr(c.node(), "slice_sizes");
  const int64_t rank = static_cast<int64_t>(n.size());
  if (!any_index_batched(c, 1)) {
    std::vector<ValueId> ins{x.value};
    for (size_t i = 1; i < c.operands.size(); ++i) ins.push_back(c.operands[i].value);
    ins.insert(ins.begin() + 1 + x.dim, full(c, 0, DType::i32, {}));
    ir::Ints s = sizes;
    s.insert(s.begin() + x.dim, c.axis_size);
    return {{c.add(Op::dynamic_slice, ins, {{"slice_sizes", s}}), x.dim}};
  }
  // An axis whose window is the whole axis needs no cutting: its start clamps to 0.
  auto batched_start = [&](int64_t d) { return c.operands[1 + d].dim != kNotBatched; };
  ValueId cur = x.dim == kNotBatched ? x.value : c.at(0, 0);
  int64_t cur_dim = x.dim == kNotBatched ? kNotBatched : 0;
  bool cut_unbatched = false;
  for (int64_t d = 0; d < rank; ++d) cut_unbatched = cut_unbatched || (!batched_start(d) && sizes[d] < n[d]);
  if (cut_unbatched) {
    std::vector<ValueId> ins{cur};
    ir::Ints s;
    if (cur_dim == 0) {
      ins.push_back(full(c, 0, DType::i32, {}));
      s.push_back(c.axis_size);
    }
    for (int64_t d = 0; d < rank; ++d) {
      ins.push_back(batched_start(d) ? full(c, 0, DType::i32, {}) : c.operands[1 + d].value);
      s.push_back(batched_start(d) ? n[d] : sizes[d]);
    }
    cur = c.add(Op::dynamic_slice, ins, {{"slice_sizes", s}});
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (!batched_start(d) || sizes[d] == n[d]) continue;
    ValueId start = clamp_start(c, c.operands[1 + d].value, n[d], sizes[d]);  // [B]
    const DType t = c.type(start).dtype;
    const Shape ishape{c.axis_size, sizes[d]};
    ValueId iota = c.add(Op::iota, {}, {{"dtype", t}, {"shape", ir::Ints(ishape)}, {"dimension", int64_t{1}}});
    ValueId indices = c.add(Op::add, {broadcast(c, start, ishape, {0}), iota});
    if (cur_dim == kNotBatched) {  // the first cut of an unbatched operand: batch axis lands at d
      cur = c.add(Op::gather, {cur, indices}, {{"axis", d}, {"batch_dims", int64_t{0}}});
      cur_dim = d;
      continue;
    }
    cur = c.move_axis(cur, cur_dim, 0);
    cur_dim = 0;
    cur = c.add(Op::gather, {cur, indices}, {{"axis", d + 1}, {"batch_dims", int64_t{1}}});
  }
  return {{cur, cur_dim}};
}

// ---- dynamic_update_slice

OutTypes dynamic_update_slice_shape(const RuleCtx& c) {
  if (c.num_inputs() < 2) c.shape_error("needs an operand and an update");
  const ValueType& x = c.input(0);
  const ValueType& u = c.input(1);
  if (u.dtype != x.dtype) c.dtype_error("update dtype must equal the operand's");
  if (u.rank() != x.rank()) c.shape_error("update rank must equal the operand's");
  for (int i = 0; i < x.rank(); ++i)
    if (u.shape[i] > x.shape[i])
      c.shape_error("update " + shape_str(u.shape) + " does not fit in " + shape_str(x.shape));
  check_start_indices(c, 2, x.rank());
  return {x};
}

ir::IdList dynamic_update_slice_transpose(TransposeCtx& c) {
  ValueId ct = c.cotangents[0];
  ir::IdList out(c.operand_types.size(), kZero);
  if (ct == kZero) return out;
  std::vector<ValueId> starts(c.operands.begin() + 2, c.operands.end());
  if (c.unknown[0]) {
    std::vector<ValueId> args = {ct, c.zeros(c.operand_types[1])};
    args.insert(args.end(), starts.begin(), starts.end());
    out[0] = c.add(Op::dynamic_update_slice, args);
  }
  if (c.unknown[1]) {
    std::vector<ValueId> args = {ct};
    args.insert(args.end(), starts.begin(), starts.end());
    out[1] = c.add(Op::dynamic_slice, args, {{"slice_sizes", ir::Ints(c.operand_types[1].shape)}});
  }
  return out;
}

// dynamic_update_slice. Unbatched start indices: one dynamic_update_slice
// with the batch axis whole (start 0) in operand and update. Batched start
// indices: per example, the update is spread over the operand's shape by a
// gather per axis at (position - clamped start), and a mask of the window
// (start <= position < start + size on every axis) selects it over the operand.
std::vector<BatchedValue> dynamic_update_slice_batch(BatchCtx& c) {
  const BatchedValue x = c.operands[0], u = c.operands[1];
  if (!any_index_batched(c, 2)) {
    const int64_t p = x.dim != kNotBatched ? x.dim : u.dim;
    std::vector<ValueId> ins{c.at(0, p), c.at(1, p)};
    for (size_t i = 2; i < c.operands.size(); ++i) ins.push_back(c.operands[i].value);
    ins.insert(ins.begin() + 2 + p, full(c, 0, DType::i32, {}));
    return {{c.add(Op::dynamic_update_slice, ins), p}};
  }
  const Shape n = c.unbatched_type(0).shape, sz = c.unbatched_type(1).shape;
  const int64_t rank = static_cast<int64_t>(n.size());
  bool empty = false, whole = true;
  for (int64_t d = 0; d < rank; ++d) {
    empty = empty || sz[d] == 0;
    whole = whole && sz[d] == n[d];
  }
  if (empty) return {x};  // nothing is written, wherever the window is
  if (whole) return {u};  // the update covers the operand, wherever the window is
  Shape out_shape = n;
  out_shape.insert(out_shape.begin(), c.axis_size);
  ValueId xv = c.at(0, 0), uv = c.at(1, 0);
  ValueId mask = -1;
  for (int64_t d = 0; d < rank; ++d) {
    if (sz[d] == n[d]) continue;  // start clamps to 0: the window spans the axis
    const BatchedValue s = c.operands[2 + d];
    ValueId start = clamp_start(c, s.value, n[d], sz[d]);
    DType t = c.type(start).dtype;
    if (t == DType::u32) {  // positions relative to the window go negative
      t = DType::i64;
      start = c.add(Op::convert_element_type, {start}, {{"new_dtype", t}});
    }
    const Shape ishape{c.axis_size, n[d]};
    ValueId iota = c.add(Op::iota, {}, {{"dtype", t}, {"shape", ir::Ints(ishape)}, {"dimension", int64_t{1}}});
    ValueId rel = c.add(Op::sub, {iota, broadcast(c, start, ishape, s.dim == kNotBatched ? ir::Ints{} : ir::Ints{0})});
    // Positions outside the window read a clamped entry; the mask drops them.
    uv = c.add(Op::gather, {uv, rel}, {{"axis", d + 1}, {"batch_dims", int64_t{1}}});
    ValueId inside = c.add(Op::bitwise_and, {c.add(Op::ge, {rel, full(c, 0, t, ishape)}),
                                             c.add(Op::lt, {rel, full(c, static_cast<double>(sz[d]), t, ishape)})});
    ValueId spread = broadcast(c, inside, out_shape, {0, d + 1});
    mask = mask == -1 ? spread : c.add(Op::bitwise_and, {mask, spread});
  }
  return {{c.add(Op::select, {mask, uv, xv}), 0}};
}

// ---- gather

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

// The out-of-range treatment of the forward op must carry over to its
// transpose: gather clamps an index (the read came from the nearest end, so
// the cotangent goes there), scatter_add drops it (the update went nowhere,
// so its cotangent is zero). scatter_add itself drops, gather itself clamps,
// hence the explicit clamp and mask below.
ir::IdList gather_transpose(TransposeCtx& c) {
  ValueId ct = c.cotangents[0];
  if (ct == kZero) return {kZero, kZero};
  ValueId idx = c.operands[1];
  const int64_t n = c.operand_types[0].shape[static_cast<size_t>(ir::int_attr(c.node(), "axis"))];
  if (n > 0) {
    ValueId lo = c.add(Op::max, {idx, c.emit().scalar_like(0, idx)});
    idx = c.add(Op::min, {lo, c.emit().scalar_like(static_cast<double>(n - 1), idx)});
  }
  return {c.add(Op::scatter_add, {c.zeros(c.operand_types[0]), idx, ct}, c.attrs()), kZero};
}

// gather: a batched operand and batched indices become one more paired batch
// dimension (both batch axes first). With only one of them batched its batch
// axis stays where it is, unless it lies among the paired batch_dims, in
// which case it is moved just past them.
std::vector<BatchedValue> gather_batch(BatchCtx& c) {
  const int64_t axis = ir::int_attr(c.node(), "axis"), b = ir::int_attr(c.node(), "batch_dims");
  const BatchedValue x = c.operands[0], idx = c.operands[1];
  const int64_t mid = c.unbatched_type(1).rank() - b;  // index axes past the paired ones
  if (x.dim != kNotBatched && idx.dim != kNotBatched) {
    ValueId xv = c.at(0, 0), iv = c.at(1, 0);
    return {{c.add(Op::gather, {xv, iv}, {{"axis", axis + 1}, {"batch_dims", b + 1}}), 0}};
  }
  if (idx.dim == kNotBatched) {
    const int64_t p = std::max(x.dim, b);
    ValueId xv = c.at(0, p);
    return {{c.add(Op::gather, {xv, idx.value}, {{"axis", p <= axis ? axis + 1 : axis}, {"batch_dims", b}}),
             result_pos(p, axis, mid)}};
  }
  const int64_t q = std::max(idx.dim, b);
  ValueId iv = c.at(1, q);
  return {{c.add(Op::gather, {x.value, iv}, c.attrs()), axis + (q - b)}};
}

// ---- scatter_add

OutTypes scatter_add_shape(const RuleCtx& c) {
  const ValueType& x = c.input(0);
  const ValueType& u = c.input(2);
  if (x.dtype == DType::bool_) c.dtype_error("needs a numeric operand, got bool");
  if (u.dtype != x.dtype)
    c.dtype_error(std::string("updates dtype ") + dtype_name(u.dtype) + " must equal the operand's " +
                  dtype_name(x.dtype));
  ValueType expected{x.dtype, gathered_shape(c, x, c.input(1))};
  if (u != expected) c.shape_error("updates must be " + type_str(expected) + ", got " + type_str(u));
  return {x};
}

ir::IdList scatter_add_transpose(TransposeCtx& c) {
  ValueId ct = c.cotangents[0];
  if (ct == kZero) return {kZero, kZero, kZero};
  ValueId ct_updates = kZero;
  if (c.unknown[2]) {
    const int64_t axis = ir::int_attr(c.node(), "axis"), b = ir::int_attr(c.node(), "batch_dims");
    const int64_t n = c.operand_types[0].shape[static_cast<size_t>(axis)];
    ValueId idx = c.operands[1];
    ValueId read = c.add(Op::gather, {ct, idx}, c.attrs());
    // An index outside [0, n) was dropped: its update's cotangent is zero.
    ValueId inside = c.add(Op::bitwise_and, {c.add(Op::ge, {idx, c.emit().scalar_like(0, idx)}),
                                             c.add(Op::lt, {idx, c.emit().scalar_like(static_cast<double>(n), idx)})});
    // Index axis j lands on result axis j among the paired batch_dims, else on axis + (j - b).
    ir::Ints dims;
    const int64_t idx_rank = c.operand_types[1].rank();
    for (int64_t j = 0; j < idx_rank; ++j) dims.push_back(j < b ? j : axis + (j - b));
    const ir::ValueType rt = c.emit().type(read);  // a copy: adding nodes may move the type table
    ValueId mask = c.add(Op::broadcast_in_dim, {inside},
                         {{"shape", ir::Ints(rt.shape)}, {"broadcast_dimensions", std::move(dims)}});
    ct_updates = c.add(Op::select, {mask, read, c.emit().zeros_like(read)});
  }
  return {c.unknown[0] ? ct : kZero, kZero, ct_updates};
}

// scatter_add: batched indices make every operand batched first, paired as
// one more batch dimension. Otherwise the operand and the updates carry the
// batch axis at matching places outside the paired batch_dims (kept where
// the operand, or else the updates, already has it when that is such a place).
std::vector<BatchedValue> scatter_add_batch(BatchCtx& c) {
  const int64_t axis = ir::int_attr(c.node(), "axis"), b = ir::int_attr(c.node(), "batch_dims");
  const BatchedValue x = c.operands[0], idx = c.operands[1], u = c.operands[2];
  const int64_t mid = c.unbatched_type(1).rank() - b;
  if (idx.dim != kNotBatched) {
    ValueId xv = c.at(0, 0), iv = c.at(1, 0), uv = c.at(2, 0);
    return {{c.add(Op::scatter_add, {xv, iv, uv}, {{"axis", axis + 1}, {"batch_dims", b + 1}}), 0}};
  }
  int64_t p = b;
  if (x.dim != kNotBatched && x.dim >= b) {
    p = x.dim;
  } else if (u.dim != kNotBatched) {
    if (u.dim >= b && u.dim <= axis)
      p = u.dim;
    else if (u.dim >= axis + mid)
      p = u.dim + 1 - mid;
  }
  ValueId xv = c.at(0, p), uv = c.at(2, result_pos(p, axis, mid));
  return {{c.add(Op::scatter_add, {xv, idx.value, uv}, {{"axis", p <= axis ? axis + 1 : axis}, {"batch_dims", b}}), p}};
}

}  // namespace graft::ops
