// Shape operations, lowered to layout primitives.
#include <algorithm>
#include <numeric>

#include "api/array_impl.h"
#include "api/dispatch.h"
#include "api/lowering.h"
#include "graft/errors.h"
#include "graft/ops.h"

namespace graft {

using ir::Op;

Array reshape(const Array& x, Shape shape, Loc loc) {
  int64_t known = 1;
  int infer = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer >= 0) throw ShapeError("reshape: more than one -1 in " + ir::shape_str(shape) + detail::where(loc));
      infer = static_cast<int>(i);
    } else if (shape[i] < 0 || shape[i] > ir::kMaxDim) {
      throw ShapeError("reshape: invalid size in " + ir::shape_str(shape) + detail::where(loc));
    } else {
      known = ir::checked_num_elements({known, shape[i]});
      if (known < 0) throw ShapeError("reshape: shape " + ir::shape_str(shape) + " is too large" + detail::where(loc));
    }
  }
  int64_t n = x.size();
  if (infer >= 0) {
    if (known == 0 || n % known != 0)
      throw ShapeError("reshape: cannot reshape " + detail::describe(x) + " to " + ir::shape_str(shape) + detail::where(loc));
    shape[infer] = n / known;
  }
  if (ir::checked_num_elements(shape) != n)
    throw ShapeError("reshape: cannot reshape " + detail::describe(x) + " (" + std::to_string(n) + " elements) to " +
                     ir::shape_str(shape) + detail::where(loc));
  if (shape == x.shape()) return x;
  return detail::bind1(Op::reshape, {x}, {{"new_sizes", ir::Ints(shape)}}, loc);
}

Array transpose(const Array& x, std::vector<int> perm, Loc loc) {
  int rank = x.ndim();
  ir::Ints p;
  if (perm.empty()) {
    for (int i = rank - 1; i >= 0; --i) p.push_back(i);
  } else {
    if (static_cast<int>(perm.size()) != rank)
      throw ShapeError("transpose: permutation of " + std::to_string(perm.size()) + " axes for " + detail::describe(x) +
                       detail::where(loc));
    for (int a : perm) p.push_back(detail::normalize_axis("transpose", a, rank, loc));
  }
  ir::Ints identity(rank);
  std::iota(identity.begin(), identity.end(), 0);
  if (p == identity) return x;
  return detail::bind1(Op::transpose, {x}, {{"permutation", p}}, loc);
}

Array broadcast_to(const Array& x, Shape shape, Loc loc) {
  Shape target = detail::broadcast_shapes("broadcast_to", std::vector<Shape>{x.shape(), shape}, loc);
  if (target != shape)
    throw ShapeError("broadcast_to: cannot broadcast " + detail::describe(x) + " to " + ir::shape_str(shape) + detail::where(loc));
  return detail::broadcast_to_shape(x, shape, loc);
}

Array expand_dims(const Array& x, int axis, Loc loc) {
  int a = detail::normalize_axis("expand_dims", axis, x.ndim() + 1, loc);
  Shape shape = x.shape();
  shape.insert(shape.begin() + a, 1);
  return reshape(x, shape, loc);
}

Array Array::operator[](int64_t i) const {
  const Loc loc = Loc::current();
  if (ndim() == 0) throw ShapeError("operator[]: cannot index a 0-d array" + detail::where(loc));
  int64_t n = shape()[0];
  if (i < -n || i >= n)
    throw ShapeError("operator[]: index " + std::to_string(i) + " is out of range for axis 0 of " + detail::describe(*this));
  if (i < 0) i += n;
  ir::Ints start(ndim(), 0), limit(shape().begin(), shape().end()), strides(ndim(), 1);
  start[0] = i;
  limit[0] = i + 1;
  Array s = detail::bind1(Op::slice, {*this}, {{"start_indices", start}, {"limit_indices", limit}, {"strides", strides}}, loc);
  Shape rest(shape().begin() + 1, shape().end());
  return detail::bind1(Op::reshape, {s}, {{"new_sizes", ir::Ints(rest)}}, loc);
}

Array Array::T() const { return transpose(*this); }

}  // namespace graft

namespace graft {

Array squeeze(const Array& x, std::vector<int> axes, Loc loc) {
  Shape shape = x.shape();
  std::vector<bool> drop(shape.size(), false);
  if (axes.empty()) {
    for (size_t i = 0; i < shape.size(); ++i) drop[i] = shape[i] == 1;
  } else {
    for (int a : axes) {
      int ax = detail::normalize_axis("squeeze", a, x.ndim(), loc);
      if (shape[ax] != 1)
        throw ShapeError("squeeze: axis " + std::to_string(a) + " of " + detail::describe(x) + " is not of size 1" +
                         detail::where(loc));
      drop[ax] = true;
    }
  }
  Shape out;
  for (size_t i = 0; i < shape.size(); ++i)
    if (!drop[i]) out.push_back(shape[i]);
  return reshape(x, out, loc);
}

Array concatenate(const std::vector<Array>& xs, int axis, Loc loc) {
  if (xs.empty()) throw ShapeError("concatenate: needs at least one array" + detail::where(loc));
  DType d = xs[0].dtype();
  for (const Array& x : xs) d = ir::promote_types(d, x.dtype());
  int rank = xs[0].ndim();
  if (rank == 0) throw ShapeError("concatenate: zero-dimensional arrays cannot be concatenated" + detail::where(loc));
  int a = detail::normalize_axis("concatenate", axis, rank, loc);
  std::vector<Array> args;
  for (const Array& x : xs) {
    bool fits = x.ndim() == rank;
    for (int i = 0; fits && i < rank; ++i) fits = i == a || x.shape()[i] == xs[0].shape()[i];
    if (!fits) {
      std::string shapes;
      for (const Array& y : xs) {
        if (!shapes.empty()) shapes += ", ";
        shapes += detail::describe(y);
      }
      throw ShapeError("concatenate: shapes must agree except on axis " + std::to_string(a) + ": " + shapes +
                       detail::where(loc));
    }
    args.push_back(detail::convert(x, d, loc));
  }
  if (args.size() == 1) return args[0];
  return detail::bind1(ir::Op::concatenate, args, {{"dimension", int64_t{a}}}, loc);
}

Array stack(const std::vector<Array>& xs, int axis, Loc loc) {
  if (xs.empty()) throw ShapeError("stack: needs at least one array" + detail::where(loc));
  int a = detail::normalize_axis("stack", axis, xs[0].ndim() + 1, loc);
  std::vector<Array> expanded;
  for (const Array& x : xs) {
    if (x.shape() != xs[0].shape())
      throw ShapeError("stack: all arrays must have one shape, got " + detail::describe(xs[0]) + " and " +
                       detail::describe(x) + detail::where(loc));
    expanded.push_back(expand_dims(x, a, loc));
  }
  return concatenate(expanded, a, loc);
}

Array flip(const Array& x, std::vector<int> axes, Loc loc) {
  ir::Ints dims;
  for (int a : axes) dims.push_back(detail::normalize_axis("flip", a, x.ndim(), loc));
  std::sort(dims.begin(), dims.end());
  if (std::adjacent_find(dims.begin(), dims.end()) != dims.end())
    throw ShapeError("flip: repeated axis" + detail::where(loc));
  if (dims.empty()) return x;
  return detail::bind1(ir::Op::rev, {x}, {{"dimensions", dims}}, loc);
}

Array slice(const Array& x, Shape start, Shape stop, Shape step, Loc loc) {
  int rank = x.ndim();
  if (step.empty()) step.assign(rank, 1);
  if (static_cast<int>(start.size()) != rank || static_cast<int>(stop.size()) != rank ||
      static_cast<int>(step.size()) != rank)
    throw ShapeError("slice: start, stop and step need " + std::to_string(rank) + " entries for " + detail::describe(x) +
                     detail::where(loc));
  const Shape& shape = x.shape();
  for (int i = 0; i < rank; ++i) {
    if (step[i] < 1)
      throw UnsupportedError("slice: step must be positive (use flip for reversed order)" + detail::where(loc));
    auto fix = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + shape[i] : v, 0, shape[i]); };
    start[i] = fix(start[i]);
    stop[i] = std::max(start[i], fix(stop[i]));
  }
  return detail::bind1(ir::Op::slice, {x},
                       {{"start_indices", ir::Ints(start)}, {"limit_indices", ir::Ints(stop)}, {"strides", ir::Ints(step)}},
                       loc);
}

Array pad(const Array& x, std::vector<std::pair<int64_t, int64_t>> widths, double value, Loc loc) {
  if (static_cast<int>(widths.size()) != x.ndim())
    throw ShapeError("pad: needs one (before, after) pair per axis of " + detail::describe(x) + detail::where(loc));
  ir::Ints lo, hi, interior(widths.size(), 0);
  for (auto [b, a] : widths) {
    if (b < 0 || a < 0) throw ShapeError("pad: widths must be non-negative" + detail::where(loc));
    lo.push_back(b);
    hi.push_back(a);
  }
  return detail::bind1(ir::Op::pad, {x, scalar(value, x.dtype(), loc)},
                       {{"padding_low", lo}, {"padding_high", hi}, {"padding_interior", interior}}, loc);
}

}  // namespace graft
