// Indexing conveniences on Array: x[{0, Slice(1, 3)}], x.at(index).set/add/
// mul/min/max/get (JAX's .at[]), and compound assignment. Everything lowers
// to public ops (take, scatter_add, where, reductions), so it differentiates,
// batches and jits through their rules.
#include <algorithm>

#include "api/array_impl.h"
#include "api/dispatch.h"
#include "api/lowering.h"
#include "graft/errors.h"
#include "graft/ops.h"

namespace graft {

using Loc = std::source_location;
using Update = IndexUpdate::Update;

namespace {

const char* update_name(Update u) {
  switch (u) {
    case Update::set: return "at().set";
    case Update::add: return "at().add";
    case Update::mul: return "at().mul";
    case Update::min: return "at().min";
    case Update::max: return "at().max";
  }
  return "at()";
}

Array add_values(const Array& a, const Array& b, const Loc& loc) { return ArrayAt(a, loc) + b; }
Array mul_values(const Array& a, const Array& b, const Loc& loc) { return ArrayAt(a, loc) * b; }

// The entries of old updated by v (both of one shape).
Array combine(Update u, const Array& old, const Array& v, const Loc& loc) {
  switch (u) {
    case Update::set: return v;
    case Update::add: return add_values(old, v, loc);
    case Update::mul: return mul_values(old, v, loc);
    case Update::min: return minimum(old, v, loc);
    case Update::max: return maximum(old, v, loc);
  }
  return v;
}

// v in x's dtype, broadcast to `shape`.
Array operand_like(const Array& v, const Array& x, const Shape& shape, const char* what, const Loc& loc) {
  Array w = astype(v, x.dtype(), loc);
  try {
    return broadcast_to(w, shape, loc);
  } catch (const ShapeError&) {
    throw ShapeError(std::string(what) + ": the update " + detail::describe(v) + " cannot be broadcast to the indexed " +
                     ir::shape_str(shape) + " of " + detail::describe(x) + detail::where(loc));
  }
}

// scatter_add does not take bool operands: such updates go through i32.
Array scatter_exact(const Array& zeros_like_x, const Array& idx, const Array& updates, const Loc& loc) {
  if (zeros_like_x.dtype() != DType::bool_) return scatter_add(zeros_like_x, idx, updates, 0, loc);
  Array s = scatter_add(astype(zeros_like_x, DType::i32, loc), idx, astype(updates, DType::i32, loc), 0, loc);
  return astype(s, DType::bool_, loc);
}

// mask (shape [n]) broadcast along axis 0 of `shape`.
Array along_axis0(const Array& mask, const Shape& shape, const Loc& loc) {
  Shape s(shape.size(), 1);
  s[0] = shape[0];
  return broadcast_to(reshape(mask, s, loc), shape, loc);
}

// ---- integer-array indices along axis 0

Array update_rows(const Array& x, const Array& indices, Update u, const Array& v, const Loc& loc) {
  const char* what = update_name(u);
  if (x.ndim() == 0) throw ShapeError(std::string(what) + ": cannot index a scalar " + detail::describe(x) + detail::where(loc));
  const int64_t n = x.shape()[0];
  Shape rest(x.shape().begin() + 1, x.shape().end());
  Shape upd_shape = indices.shape();
  upd_shape.insert(upd_shape.end(), rest.begin(), rest.end());
  Array vv = operand_like(v, x, upd_shape, what, loc);
  if (u == Update::add) return scatter_add(x, indices, vv, 0, loc);

  // Flattened: m indices (negatives wrapped once), updates [m] + rest.
  const int64_t m = indices.size();
  Array idx = reshape(indices, {m}, loc);
  if (idx.dtype() != DType::u32) idx = where(idx < 0, idx + n, idx, loc);
  Shape flat_shape{m};
  flat_shape.insert(flat_shape.end(), rest.begin(), rest.end());
  Array vf = reshape(vv, flat_shape, loc);

  if (u == Update::set) {
    // Repeated indices: the last update wins. later[j]: a later entry has j's index.
    std::vector<uint8_t> upper(static_cast<size_t>(m * m), 0);
    for (int64_t j = 0; j < m; ++j)
      for (int64_t k = j + 1; k < m; ++k) upper[static_cast<size_t>(j * m + k)] = 1;
    Array same = reshape(idx, {m, 1}, loc) == reshape(idx, {1, m}, loc);
    Array later = logical_and(same, astype(array(std::vector<int32_t>(upper.begin(), upper.end()), {m, m}), DType::bool_));
    Array keep = sum(astype(later, DType::i32, loc), {1}, false, loc) == 0;
    Array kept = where(along_axis0(keep, flat_shape, loc), vf, zeros(flat_shape, x.dtype(), loc), loc);
    Array scattered = scatter_exact(zeros(x.shape(), x.dtype(), loc), idx, kept, loc);
    Array hits = scatter_add(zeros({n}, DType::i32, loc), idx, ones({m}, DType::i32, loc), 0, loc) > 0;
    return where(along_axis0(hits, x.shape(), loc), scattered, x, loc);
  }

  // mul, min, max: every update of a row combines with it. match[j, p]: entry j hits row p.
  Shape big{m, n};
  big.insert(big.end(), rest.begin(), rest.end());
  Shape col(big.size(), 1);
  col[0] = m;
  col[1] = n;
  Array positions = reshape(astype(arange(n, DType::i64, loc), idx.dtype(), loc), {1, n}, loc);
  Array match = broadcast_to(reshape(reshape(idx, {m, 1}, loc) == positions, col, loc), big, loc);
  Shape v_shape = flat_shape;
  v_shape.insert(v_shape.begin() + 1, 1);
  Array vals = broadcast_to(reshape(vf, v_shape, loc), big, loc);
  Shape x_shape = x.shape();
  x_shape.insert(x_shape.begin(), 1);
  Array olds = broadcast_to(reshape(x, x_shape, loc), big, loc);
  switch (u) {
    case Update::mul: return x * prod(where(match, vals, ones(big, x.dtype(), loc), loc), {0}, false, loc);
    case Update::min: return minimum(x, min(where(match, vals, olds, loc), {0}, false, loc), loc);
    default: return maximum(x, max(where(match, vals, olds, loc), {0}, false, loc), loc);
  }
}

// ---- per-axis lists of integers and slices (NumPy's basic indexing)

struct Basic {
  std::vector<std::vector<int64_t>> positions;  // per axis of x: the indices taken
  std::vector<bool> dropped;                    // per axis: an integer entry (the axis disappears)
};

// An index list with its Ellipsis expanded into whole-axis slices and its
// Nones taken out: the plain per-axis list, and the positions of the result
// where the Nones put new axes of size 1.
struct Expanded {
  std::vector<Index> plain;
  std::vector<int64_t> new_axes;
};

Expanded expand(const Array& x, const std::vector<Index>& index, const char* what, const Loc& loc) {
  int64_t axes_named = 0, ellipses = 0;
  for (const Index& e : index) {
    axes_named += std::holds_alternative<int64_t>(e) || std::holds_alternative<Slice>(e);
    ellipses += std::holds_alternative<Ellipsis>(e);
  }
  if (ellipses > 1) throw ShapeError(std::string(what) + ": more than one ellipsis in an index list" + detail::where(loc));
  if (axes_named > x.ndim())
    throw ShapeError(std::string(what) + ": " + std::to_string(axes_named) + " indices for " + detail::describe(x) +
                     detail::where(loc));
  Expanded out;
  int64_t result_axis = 0;
  for (const Index& e : index) {
    if (std::holds_alternative<None>(e)) {
      out.new_axes.push_back(result_axis++);
    } else if (std::holds_alternative<Ellipsis>(e)) {
      for (int64_t k = 0; k < x.ndim() - axes_named; ++k, ++result_axis) out.plain.push_back(Slice());
    } else {
      if (std::holds_alternative<Slice>(e)) ++result_axis;
      out.plain.push_back(e);
    }
  }
  return out;
}

// r with a new axis of size 1 at each of `new_axes` (positions in the result, ascending).
Array with_new_axes(const Array& r, const std::vector<int64_t>& new_axes, const Loc& loc) {
  if (new_axes.empty()) return r;
  Shape shape = r.shape();
  for (int64_t a : new_axes) shape.insert(shape.begin() + std::min<int64_t>(a, static_cast<int64_t>(shape.size())), 1);
  return reshape(r, shape, loc);
}

Basic resolve(const Array& x, const std::vector<Index>& index, const char* what, const Loc& loc) {
  const int rank = x.ndim();
  if (static_cast<int>(index.size()) > rank)
    throw ShapeError(std::string(what) + ": " + std::to_string(index.size()) + " indices for " + detail::describe(x) +
                     detail::where(loc));
  Basic b;
  for (int d = 0; d < rank; ++d) {
    const int64_t n = x.shape()[static_cast<size_t>(d)];
    std::vector<int64_t> pos;
    bool drop = false;
    if (d < static_cast<int>(index.size()) && std::holds_alternative<int64_t>(index[static_cast<size_t>(d)])) {
      int64_t i = std::get<int64_t>(index[static_cast<size_t>(d)]);
      if (i < -n || i >= n)
        throw ShapeError(std::string(what) + ": index " + std::to_string(i) + " is out of range for axis " +
                         std::to_string(d) + " of " + detail::describe(x) + detail::where(loc));
      pos.push_back(i < 0 ? i + n : i);
      drop = true;
    } else {
      Slice s = d < static_cast<int>(index.size()) ? std::get<Slice>(index[static_cast<size_t>(d)]) : Slice();
      if (s.step == 0) throw ShapeError(std::string(what) + ": slice step cannot be zero" + detail::where(loc));
      // NumPy's slice.indices: bounds wrap once, then clamp to the walk's direction.
      auto bound = [&](std::optional<int64_t> v, int64_t open) {
        if (!v) return open;
        int64_t x_ = *v < 0 ? *v + n : *v;
        return s.step > 0 ? std::clamp<int64_t>(x_, 0, n) : std::clamp<int64_t>(x_, -1, n - 1);
      };
      const int64_t start = bound(s.start, s.step > 0 ? 0 : n - 1), stop = bound(s.stop, s.step > 0 ? n : -1);
      for (int64_t i = start; s.step > 0 ? i < stop : i > stop; i += s.step) pos.push_back(i);
    }
    b.positions.push_back(std::move(pos));
    b.dropped.push_back(drop);
  }
  return b;
}

Array basic_get(const Array& x, const Basic& b, const Loc& loc) {
  Array cur = x;
  for (int d = x.ndim() - 1; d >= 0; --d) {  // last axis first: earlier axes keep their numbers
    const std::vector<int64_t>& pos = b.positions[static_cast<size_t>(d)];
    const int64_t n = x.shape()[static_cast<size_t>(d)];
    if (b.dropped[static_cast<size_t>(d)]) {
      cur = take(cur, scalar(static_cast<double>(pos[0]), DType::i32, loc), d, loc);
      continue;
    }
    bool whole = static_cast<int64_t>(pos.size()) == n;
    for (size_t k = 0; whole && k < pos.size(); ++k) whole = pos[k] == static_cast<int64_t>(k);
    if (whole) continue;
    std::vector<int32_t> p(pos.begin(), pos.end());
    cur = take(cur, array(p, {static_cast<int64_t>(p.size())}, loc), d, loc);
  }
  return cur;
}

Array basic_update(const Array& x, const Basic& b, Update u, const Array& v, const Loc& loc) {
  Array region = basic_get(x, b, loc);
  Array fresh = combine(u, region, operand_like(v, x, region.shape(), update_name(u), loc), loc);
  // Flat positions of the region's entries in x, in the region's order (all distinct).
  std::vector<int32_t> flat{0};
  for (size_t d = 0; d < b.positions.size(); ++d) {
    std::vector<int32_t> next;
    for (int32_t base : flat)
      for (int64_t p : b.positions[d])
        next.push_back(static_cast<int32_t>(base * x.shape()[d] + p));
    flat = std::move(next);
  }
  const int64_t n = x.size(), r = static_cast<int64_t>(flat.size());
  std::vector<uint8_t> hit(static_cast<size_t>(n), 0);
  for (int32_t p : flat) hit[static_cast<size_t>(p)] = 1;
  Array mask = astype(array(std::vector<int32_t>(hit.begin(), hit.end()), {n}, loc), DType::bool_, loc);
  Array xf = reshape(x, {n}, loc);
  Array scattered = scatter_exact(zeros({n}, x.dtype(), loc), array(flat, {r}, loc), reshape(fresh, {r}, loc), loc);
  return reshape(where(mask, scattered, xf, loc), x.shape(), loc);
}

}  // namespace

Array Array::operator[](const std::vector<Index>& index) const {
  return at(index).get();
}

IndexUpdate Array::at(int64_t i) const {
  IndexUpdate u(*this, IndexUpdate::Kind::integer);
  u.i_ = i;
  return u;
}

IndexUpdate Array::at(const Array& indices) const {
  IndexUpdate u(*this, IndexUpdate::Kind::array);
  u.indices_ = indices;
  return u;
}

IndexUpdate Array::at(std::vector<Index> index) const {
  IndexUpdate u(*this, IndexUpdate::Kind::list);
  u.list_ = std::move(index);
  return u;
}

Array IndexUpdate::get(Loc loc) const {
  switch (kind_) {
    case Kind::integer: return take(x_, scalar(static_cast<double>(i_), DType::i64, loc), 0, loc);
    case Kind::array:
      if (!ir::is_integer(detail::checked_impl(indices_, "at().get").type.dtype))
        throw DTypeError("at().get: indices must be integers, got " + detail::describe(indices_) + detail::where(loc));
      return take(x_, indices_, 0, loc);
    case Kind::list: {
      const Expanded e = expand(x_, list_, "at().get", loc);
      return with_new_axes(basic_get(x_, resolve(x_, e.plain, "at().get", loc), loc), e.new_axes, loc);
    }
  }
  return x_;
}

Array IndexUpdate::apply(Update u, const Array& v, const Loc& loc) const {
  switch (kind_) {
    case Kind::integer:
      return update_rows(x_, scalar(static_cast<double>(i_), DType::i64, loc), u, v, loc);
    case Kind::array:
      if (!ir::is_integer(detail::checked_impl(indices_, update_name(u)).type.dtype))
        throw DTypeError(std::string(update_name(u)) + ": indices must be integers, got " + detail::describe(indices_) +
                         detail::where(loc));
      return update_rows(x_, indices_, u, v, loc);
    case Kind::list: {
      const Expanded e = expand(x_, list_, update_name(u), loc);
      if (!e.new_axes.empty())
        throw ShapeError(std::string(update_name(u)) + ": none (a new axis) in an .at[] index list" + detail::where(loc));
      return basic_update(x_, resolve(x_, e.plain, update_name(u), loc), u, v, loc);
    }
  }
  return x_;
}

Array IndexUpdate::apply(Update u, ScalarAt v) const {
  // A C++ number is weakly typed: it takes x's dtype.
  return apply(u, scalar(v.value, x_.dtype(), v.loc), v.loc);
}

Array IndexUpdate::set(const Array& v, Loc loc) const { return apply(Update::set, v, loc); }
Array IndexUpdate::add(const Array& v, Loc loc) const { return apply(Update::add, v, loc); }
Array IndexUpdate::mul(const Array& v, Loc loc) const { return apply(Update::mul, v, loc); }
Array IndexUpdate::min(const Array& v, Loc loc) const { return apply(Update::min, v, loc); }
Array IndexUpdate::max(const Array& v, Loc loc) const { return apply(Update::max, v, loc); }
Array IndexUpdate::set(ScalarAt v) const { return apply(Update::set, v); }
Array IndexUpdate::add(ScalarAt v) const { return apply(Update::add, v); }
Array IndexUpdate::mul(ScalarAt v) const { return apply(Update::mul, v); }
Array IndexUpdate::min(ScalarAt v) const { return apply(Update::min, v); }
Array IndexUpdate::max(ScalarAt v) const { return apply(Update::max, v); }

// ---- compound assignment: rebinds the handle

Array& Array::operator+=(ArrayAt other) { return *this = ArrayAt(*this, other.loc) + other.array; }
Array& Array::operator-=(ArrayAt other) { return *this = ArrayAt(*this, other.loc) - other.array; }
Array& Array::operator*=(ArrayAt other) { return *this = ArrayAt(*this, other.loc) * other.array; }
Array& Array::operator/=(ArrayAt other) { return *this = ArrayAt(*this, other.loc) / other.array; }

namespace {
Array with_scalar(detail::BinaryOp op, const Array& x, const ScalarAt& s) {
  return detail::binary_with_scalar(op, x, s.value, s.is_float, false, s.loc);
}
}  // namespace

Array& Array::operator+=(ScalarAt other) { return *this = with_scalar(detail::BinaryOp::add, *this, other); }
Array& Array::operator-=(ScalarAt other) { return *this = with_scalar(detail::BinaryOp::sub, *this, other); }
Array& Array::operator*=(ScalarAt other) { return *this = with_scalar(detail::BinaryOp::mul, *this, other); }
Array& Array::operator/=(ScalarAt other) { return *this = with_scalar(detail::BinaryOp::div, *this, other); }

}  // namespace graft
