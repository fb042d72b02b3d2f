// Reductions, lowered to reduce_* primitives (keepdims by a reshape).
#include <algorithm>

#include "api/array_impl.h"
#include "api/dispatch.h"
#include "api/lowering.h"
#include "graft/errors.h"
#include "graft/ops.h"

namespace graft {

using ir::Op;

namespace {

// Normalised, sorted, unique axes; empty means all.
ir::Ints reduction_axes(const char* name, const Array& x, const std::vector<int>& axes, const Loc& loc) {
  int rank = x.ndim();
  ir::Ints out;
  if (axes.empty()) {
    for (int i = 0; i < rank; ++i) out.push_back(i);
    return out;
  }
  for (int a : axes) out.push_back(detail::normalize_axis(name, a, rank, loc));
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end())
    throw ShapeError(std::string(name) + ": repeated axis in reduction of " + detail::describe(x) + detail::where(loc));
  return out;
}

Array keep_dims(const Array& reduced, const Array& x, const ir::Ints& axes, bool keepdims, const Loc& loc) {
  if (!keepdims) return reduced;
  Shape shape = x.shape();
  for (int64_t a : axes) shape[a] = 1;
  return detail::bind1(Op::reshape, {reduced}, {{"new_sizes", ir::Ints(shape)}}, loc);
}

Array reduce(Op op, const char* name, const Array& x, const std::vector<int>& axes, bool keepdims, const Loc& loc) {
  ir::Ints ax = reduction_axes(name, x, axes, loc);
  Array in = x;
  if (x.dtype() == DType::bool_ && (op == Op::reduce_sum || op == Op::reduce_prod)) in = detail::convert(x, DType::i32, loc);
  if (op == Op::reduce_max || op == Op::reduce_min)
    for (int64_t a : ax)
      if (x.shape()[a] == 0)
        throw ShapeError(std::string(name) + ": zero-size axis " + std::to_string(a) + " of " + detail::describe(x) +
                         " has no identity" + detail::where(loc));
  Array r = detail::bind1(op, {in}, {{"axes", ax}}, loc);
  return keep_dims(r, x, ax, keepdims, loc);
}

}  // namespace

Array sum(const Array& x, std::vector<int> axes, bool keepdims, Loc loc) {
  return reduce(Op::reduce_sum, "sum", x, axes, keepdims, loc);
}
Array prod(const Array& x, std::vector<int> axes, bool keepdims, Loc loc) {
  return reduce(Op::reduce_prod, "prod", x, axes, keepdims, loc);
}
Array max(const Array& x, std::vector<int> axes, bool keepdims, Loc loc) {
  return reduce(Op::reduce_max, "max", x, axes, keepdims, loc);
}
Array min(const Array& x, std::vector<int> axes, bool keepdims, Loc loc) {
  return reduce(Op::reduce_min, "min", x, axes, keepdims, loc);
}

Array mean(const Array& x, std::vector<int> axes, bool keepdims, Loc loc) {
  ir::Ints ax = reduction_axes("mean", x, axes, loc);
  int64_t count = 1;
  for (int64_t a : ax) count *= x.shape()[a];
  Array xf = ir::is_floating(x.dtype()) ? x : detail::convert(x, DType::f32, loc);
  Array s = reduce(Op::reduce_sum, "mean", xf, axes, keepdims, loc);
  return detail::binary_with_scalar(detail::BinaryOp::div, s, static_cast<double>(count), true, false, loc);
}

}  // namespace graft
