// NumPy helpers that real programs are written in: take_along_axis and
// put_along_axis, tril/triu, diag/diagonal/trace, remainder and
// floor_divide. Each lowers to gather, scatter, select and elementwise
// primitives, so it is differentiable, batchable and jittable.
#include <algorithm>
#include <numeric>
#include <string>

#include "api/array_impl.h"
#include "api/dispatch.h"
#include "api/lowering.h"
#include "graft/errors.h"
#include "graft/ops.h"
#include "ir/trace.h"
#include "ir/value.h"

namespace graft {
namespace {

void check_integer(const char* name, const Array& idx, const Loc& loc) {
  const DType d = detail::checked_impl(idx, name).type.dtype;
  if (!ir::is_integer(d))
    throw DTypeError(std::string(name) + ": indices must be integers, got " + dtype_name(d) + detail::where(loc));
}

// The permutation moving axis `from` to the end.
std::vector<int> to_last(int from, int rank) {
  std::vector<int> p;
  for (int i = 0; i < rank; ++i)
    if (i != from) p.push_back(i);
  p.push_back(from);
  return p;
}

// The inverse of to_last.
std::vector<int> from_last(int to, int rank) {
  std::vector<int> p;
  for (int i = 0, k = 0; i < rank; ++i) p.push_back(i == to ? rank - 1 : k++);
  return p;
}

// For take/put_along_axis: x and idx with `axis` last, their other axes
// broadcast together, and the flat indices into x's flattened elements of
// each entry of idx (entries clamped into [0, n), negative ones counted from
// the end first). Returns (flat x, flat indices as [M * k], the shape of the
// result with the axis last).
struct AlongAxis {
  Array flat_x, flat_idx;
  Shape shape;    // broadcast leading axes, then idx's length along axis
  Shape x_shape;  // x with axis last, leading axes broadcast
  bool x_broadcast = false;  // whether the indices made x's leading axes larger
};

AlongAxis along_axis(const char* name, const Array& x, const Array& idx, int& axis, const Loc& loc) {
  check_integer(name, idx, loc);
  if (idx.ndim() != x.ndim())
    throw ShapeError(std::string(name) + ": indices of rank " + std::to_string(idx.ndim()) + " for an array of rank " +
                     std::to_string(x.ndim()) + " (they must have the same rank)" + detail::where(loc));
  axis = detail::normalize_axis(name, axis, x.ndim(), loc);
  const int r = static_cast<int>(x.ndim());
  Array xt = transpose(x, to_last(axis, r), loc), it = transpose(idx, to_last(axis, r), loc);
  Shape lead_x(xt.shape().begin(), xt.shape().end() - 1), lead_i(it.shape().begin(), it.shape().end() - 1);
  const Shape lead = detail::broadcast_shapes(name, std::vector<Shape>{lead_x, lead_i}, loc);
  const int64_t n = xt.shape().back(), k = it.shape().back();
  Shape xs = lead, is = lead;
  xs.push_back(n);
  is.push_back(k);
  xt = broadcast_to(xt, xs, loc);
  it = broadcast_to(astype(it, DType::i32, loc), is, loc);
  if (n == 0 && k > 0) throw ShapeError(std::string(name) + ": indices into an empty axis" + detail::where(loc));
  it = where(it < 0, it + static_cast<int>(n), it, loc);
  it = clip(it, 0, static_cast<double>(std::max<int64_t>(n - 1, 0)), loc);
  int64_t m = 1;
  for (int64_t d : lead) m *= d;
  if (m * n > (int64_t{1} << 31) - 1)
    throw ShapeError(std::string(name) + ": more than 2^31 elements" + detail::where(loc));
  Shape row_shape = lead;
  row_shape.push_back(1);
  Array rows = reshape(arange(m, DType::i32, loc) * static_cast<int>(n), row_shape, loc);
  return {reshape(xt, {-1}, loc), reshape(it + rows, {-1}, loc), is, xs, lead != lead_x};
}

}  // namespace

Array take_along_axis(const Array& x, const Array& indices, int axis, Loc loc) {
  AlongAxis a = along_axis("take_along_axis", x, indices, axis, loc);
  Array out = reshape(take(a.flat_x, a.flat_idx, 0, loc), a.shape, loc);
  return transpose(out, from_last(axis, static_cast<int>(x.ndim())), loc);
}

Array put_along_axis(const Array& x, const Array& indices, const Array& values, int axis, Loc loc) {
  AlongAxis a = along_axis("put_along_axis", x, indices, axis, loc);
  const int r = static_cast<int>(x.ndim());
  // values broadcast against indices (in x's axis order), then moved like them
  Shape want = a.shape;
  std::vector<int> back = from_last(axis, r);
  Shape want_orig(static_cast<size_t>(r));
  for (int i = 0; i < r; ++i) want_orig[static_cast<size_t>(i)] = want[static_cast<size_t>(back[static_cast<size_t>(i)])];
  Array v = transpose(broadcast_to(astype(values, x.dtype(), loc), want_orig, loc), to_last(axis, r), loc);
  Array flat = a.flat_x.at(a.flat_idx).set(reshape(v, {-1}, loc), loc);
  if (a.x_broadcast)
    throw ShapeError("put_along_axis: indices of shape " + ir::shape_str(indices.shape()) + " do not fit x of shape " +
                     ir::shape_str(x.shape()) + " (they may broadcast against x, not enlarge it)" + detail::where(loc));
  return transpose(reshape(flat, a.x_shape, loc), back, loc);
}

namespace {

// (row index - column index) over the last two axes of x, as i32 [.., m, n].
Array diagonal_offset(const Array& x, const char* name, const Loc& loc) {
  if (x.ndim() < 2) throw ShapeError(std::string(name) + ": needs at least 2 axes, got shape " + ir::shape_str(x.shape()) + detail::where(loc));
  const int64_t m = x.shape()[x.ndim() - 2], n = x.shape()[x.ndim() - 1];
  Array rows = reshape(arange(m, DType::i32, loc), {m, 1}, loc);
  Array cols = reshape(arange(n, DType::i32, loc), {1, n}, loc);
  return cols - rows;
}

}  // namespace

Array tril(const Array& x, int k, Loc loc) {
  Array keep = diagonal_offset(x, "tril", loc) <= k;
  return where(broadcast_to(keep, x.shape(), loc), x, zeros(x.shape(), x.dtype(), loc), loc);
}

Array triu(const Array& x, int k, Loc loc) {
  Array keep = diagonal_offset(x, "triu", loc) >= k;
  return where(broadcast_to(keep, x.shape(), loc), x, zeros(x.shape(), x.dtype(), loc), loc);
}

Array diagonal(const Array& x, int offset, int axis1, int axis2, Loc loc) {
  const int r = static_cast<int>(x.ndim());
  if (r < 2) throw ShapeError("diagonal: needs at least 2 axes, got shape " + ir::shape_str(x.shape()) + detail::where(loc));
  const int a1 = detail::normalize_axis("diagonal", axis1, r, loc), a2 = detail::normalize_axis("diagonal", axis2, r, loc);
  if (a1 == a2) throw ShapeError("diagonal: axis1 and axis2 are both " + std::to_string(a1) + detail::where(loc));
  std::vector<int> perm;
  for (int i = 0; i < r; ++i)
    if (i != a1 && i != a2) perm.push_back(i);
  perm.push_back(a1);
  perm.push_back(a2);
  Array t = transpose(x, perm, loc);
  const int64_t m = x.shape()[static_cast<size_t>(a1)], n = x.shape()[static_cast<size_t>(a2)];
  // Entries (i, i + offset) for offset >= 0, (i - offset, i) otherwise.
  const int64_t len = std::max<int64_t>(0, offset >= 0 ? std::min(m, n - offset) : std::min(m + offset, n));
  Shape lead(t.shape().begin(), t.shape().end() - 2);
  Shape flat_shape = lead;
  flat_shape.push_back(m * n);
  Array flat = reshape(t, flat_shape, loc);
  std::vector<int32_t> idx(static_cast<size_t>(len));
  for (int64_t i = 0; i < len; ++i)
    idx[static_cast<size_t>(i)] = static_cast<int32_t>(offset >= 0 ? i * n + i + offset : (i - offset) * n + i);
  return take(flat, array(idx, {len}, loc), static_cast<int>(lead.size()), loc);
}

Array diag(const Array& x, int k, Loc loc) {
  if (x.ndim() == 2) return diagonal(x, k, 0, 1, loc);
  if (x.ndim() != 1) throw ShapeError("diag: needs 1 or 2 axes, got shape " + ir::shape_str(x.shape()) + detail::where(loc));
  const int64_t len = x.shape()[0], n = len + (k >= 0 ? k : -k);
  // out[i, j] = x[i] on j - i == k >= 0 (x padded at the end, repeated along rows), x[j] on k < 0.
  Array v = pad(x, {{0, n - len}}, 0, loc);
  Array spread = k >= 0 ? broadcast_to(reshape(v, {n, 1}, loc), {n, n}, loc) : broadcast_to(reshape(v, {1, n}, loc), {n, n}, loc);
  Array on = diagonal_offset(zeros({n, n}, DType::bool_, loc), "diag", loc) == k;
  return where(on, spread, zeros({n, n}, x.dtype(), loc), loc);
}

Array trace(const Array& x, int offset, int axis1, int axis2, Loc loc) {
  return sum(diagonal(x, offset, axis1, axis2, loc), {-1}, false, loc);
}

// ---- remainder and floor_divide, NumPy's (and JAX's) results

namespace detail {

Array numpy_remainder(const Array& a, const Array& b, const Loc& loc) {
  if (a.dtype() == DType::bool_) throw DTypeError("remainder: bool operands" + where(loc));
  Array zero = zeros(b.shape(), b.dtype(), loc);
  // As JAX: an integer divisor of 0 is taken as 1, so x % 0 is 0 (XLA's rem would give x).
  const Array d = ir::is_integer(a.dtype()) ? graft::where(b == zero, ones_like(b, std::nullopt, loc), b, loc) : b;
  Array r = bind1(ir::Op::rem, {a, d}, {}, loc);
  if (ir::is_unsigned_integer(a.dtype())) return r;  // unsigned: the truncated remainder is the floored one
  Array fix = logical_and(r != zero, (r < zero) != (d < zero), loc);
  return graft::where(fix, r + d, r, loc);
}

Array numpy_floor_divide(const Array& a, const Array& b, const Loc& loc) {
  if (a.dtype() == DType::bool_) throw DTypeError("floor_divide: bool operands" + where(loc));
  Array r = bind1(ir::Op::rem, {a, b}, {}, loc);
  Array zero = zeros(r.shape(), r.dtype(), loc);
  if (!ir::is_floating(a.dtype())) {
    Array q = bind1(ir::Op::div, {a, b}, {}, loc);  // truncates, as C
    if (ir::is_unsigned_integer(a.dtype())) return q;
    // JAX's test, sign(a) != sign(b): with b = 0 the quotient is XLA's -1, less 1.
    Array fix = logical_and(r != zero, sign(a) != sign(b), loc);
    return graft::where(fix, q - 1, q, loc);
  }
  // JAX's float divmod: (a - rem) / b is integral up to rounding; floored by the sign fix, then rounded.
  Array q = bind1(ir::Op::div, {a - r, b}, {}, loc);
  Array fix = logical_and(r != zero, sign(b) != sign(r), loc);
  q = graft::where(fix, q - 1.0, q, loc);
  return round(q);
}

Array remainder_or_floor_divide(bool remainder, const Array& x, const Array& y, const Loc& loc) {
  std::vector<Array> args = promote_and_broadcast(remainder ? "remainder" : "floor_divide", {x, y}, loc);
  return remainder ? numpy_remainder(args[0], args[1], loc) : numpy_floor_divide(args[0], args[1], loc);
}

}  // namespace detail

Array remainder(const Array& x, const Array& y, Loc loc) { return detail::remainder_or_floor_divide(true, x, y, loc); }
Array floor_divide(const Array& x, const Array& y, Loc loc) { return detail::remainder_or_floor_divide(false, x, y, loc); }
Array operator%(ArrayAt a, const Array& b) { return detail::remainder_or_floor_divide(true, a.array, b, a.loc); }

}  // namespace graft
