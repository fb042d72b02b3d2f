// Shape operations, lowered to layout primitives.
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
