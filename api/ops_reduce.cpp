// Reductions, lowered to reduce_* primitives (keepdims by a reshape).
#include <algorithm>
#include <limits>
#include <numeric>
#include <utility>

#include "api/array_impl.h"
#include "api/dispatch.h"
#include "api/lowering.h"
#include "graft/control_flow.h"
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

// any/all test "nonzero" (x != 0, so NaN counts), then reduce with or/and.
Array any(const Array& x, std::vector<int> axes, bool keepdims, Loc loc) {
  Array b = x.dtype() == DType::bool_ ? x : detail::binary_with_scalar(detail::BinaryOp::ne, x, 0, false, false, loc);
  return reduce(Op::reduce_or, "any", b, axes, keepdims, loc);
}
Array all(const Array& x, std::vector<int> axes, bool keepdims, Loc loc) {
  Array b = x.dtype() == DType::bool_ ? x : detail::binary_with_scalar(detail::BinaryOp::ne, x, 0, false, false, loc);
  return reduce(Op::reduce_and, "all", b, axes, keepdims, loc);
}

Array mean(const Array& x, std::vector<int> axes, bool keepdims, Loc loc) {
  ir::Ints ax = reduction_axes("mean", x, axes, loc);
  int64_t count = 1;
  for (int64_t a : ax) count *= x.shape()[a];
  Array xf = ir::is_inexact(x.dtype()) ? x : detail::convert(x, default_float_dtype(), loc);
  Array s = reduce(Op::reduce_sum, "mean", xf, axes, keepdims, loc);
  return detail::binary_with_scalar(detail::BinaryOp::div, s, static_cast<double>(count), true, false, loc);
}

namespace {

// Two passes (deviations from the mean, then their squares) rather than
// E[x^2] - E[x]^2, which cancels badly when the mean is large. `name` is the
// op the user called, for errors.
Array variance(const char* name, const Array& x, const std::vector<int>& axes, bool keepdims, int ddof, const Loc& loc) {
  if (detail::checked_impl(x, name).type.dtype == DType::bool_)
    throw DTypeError(std::string(name) + ": expected a numeric array, got " + detail::describe(x) + detail::where(loc));
  ir::Ints ax = reduction_axes(name, x, axes, loc);
  int64_t count = 1;
  for (int64_t a : ax) count *= x.shape()[a];
  Array xf = ir::is_inexact(x.dtype()) ? x : detail::convert(x, default_float_dtype(), loc);
  Array centred = ArrayAt(xf, loc) - mean(xf, axes, true, loc);
  // |x - mean|^2: real for complex x, as NumPy's and JAX's var.
  Array sq = ir::is_complex(xf.dtype()) ? real(centred * conj(centred, loc), loc) : square({centred, loc});
  Array s = reduce(Op::reduce_sum, name, sq, axes, keepdims, loc);
  // N - ddof <= 0 divides by zero (inf or NaN), as NumPy does after its warning.
  double divisor = static_cast<double>(std::max<int64_t>(count - ddof, 0));
  return detail::binary_with_scalar(detail::BinaryOp::div, s, divisor, true, false, loc);
}

}  // namespace

Array var(const Array& x, std::vector<int> axes, bool keepdims, int ddof, Loc loc) {
  return variance("var", x, axes, keepdims, ddof, loc);
}

Array std(const Array& x, std::vector<int> axes, bool keepdims, int ddof, Loc loc) {
  return sqrt({variance("std", x, axes, keepdims, ddof, loc), loc});
}

}  // namespace graft

namespace graft {

namespace {

Array arg_reduce(Op op, const char* name, const Array& x, int axis, const Loc& loc) {
  int a = detail::normalize_axis(name, axis, x.ndim(), loc);
  if (x.shape()[a] == 0)
    throw ShapeError(std::string(name) + ": empty axis " + std::to_string(a) + " of " + detail::describe(x) + detail::where(loc));
  return detail::bind1(op, {x}, {{"axis", int64_t{a}}, {"index_dtype", DType::i32}}, loc);
}

}  // namespace

Array argmax(const Array& x, int axis, Loc loc) { return arg_reduce(Op::argmax, "argmax", x, axis, loc); }
Array argmin(const Array& x, int axis, Loc loc) { return arg_reduce(Op::argmin, "argmin", x, axis, loc); }

// Shifted by the (gradient-stopped) maximum so large inputs do not overflow.
Array logsumexp(const Array& x, std::vector<int> axes, bool keepdims, Loc loc) {
  detail::Composite group("logsumexp", loc);
  Array xf = ir::is_floating(x.dtype()) ? x : detail::convert(x, default_float_dtype(), loc);
  Array m = stop_gradient({max(xf, axes, true, loc), loc});
  Array finite_m = where(isfinite({m, loc}), m, zeros({}, m.dtype(), loc), loc);
  Array s = sum(exp({xf - finite_m, loc}), axes, true, loc);
  Array r = log({s, loc}) + finite_m;
  if (keepdims) return r;
  return squeeze(r, axes.empty() ? std::vector<int>{} : axes, loc);
}

Array log_softmax(const Array& x, std::vector<int> axes, Loc loc) {
  detail::Composite group("log_softmax", loc);
  Array xf = ir::is_floating(x.dtype()) ? x : detail::convert(x, default_float_dtype(), loc);
  return xf - logsumexp(xf, axes, true, loc);
}

Array softmax(const Array& x, std::vector<int> axes, Loc loc) {
  detail::Composite group("softmax", loc);
  Array xf = ir::is_floating(x.dtype()) ? x : detail::convert(x, default_float_dtype(), loc);
  Array e = exp({xf - stop_gradient({max(xf, axes, true, loc), loc}), loc});
  return e / sum(e, axes, true, loc);
}

namespace {

// Cumulative scans along one axis; booleans count (or multiply) as i32, like NumPy.
Array cumulative(Op op, const char* name, const Array& x, int axis, bool reverse, Loc loc) {
  int a = detail::normalize_axis(name, axis, x.ndim(), loc);
  Array in = x.dtype() == DType::bool_ ? detail::convert(x, DType::i32, loc) : x;
  return detail::bind1(op, {in}, {{"axis", int64_t{a}}, {"reverse", int64_t{reverse}}}, loc);
}

}  // namespace

Array cumsum(const Array& x, int axis, bool reverse, Loc loc) {
  return cumulative(Op::cumsum, "cumsum", x, axis, reverse, loc);
}
Array cumprod(const Array& x, int axis, bool reverse, Loc loc) {
  return cumulative(Op::cumprod, "cumprod", x, axis, reverse, loc);
}
Array cummax(const Array& x, int axis, bool reverse, Loc loc) {
  return cumulative(Op::cummax, "cummax", x, axis, reverse, loc);
}
Array cummin(const Array& x, int axis, bool reverse, Loc loc) {
  return cumulative(Op::cummin, "cummin", x, axis, reverse, loc);
}

// A scan along the axis whose carry is the running logaddexp: exact where
// a log of a cumsum of exps would overflow, or underflow to -inf for
// entries far below the line's largest. Its derivative and batching are
// scan's and logaddexp's.
Array cumlogsumexp(const Array& x, int axis, bool reverse, Loc loc) {
  if (!ir::is_floating(x.dtype()))
    throw DTypeError("cumlogsumexp: needs a float array, got " + detail::describe(x) + detail::where(loc));
  const int a = detail::normalize_axis("cumlogsumexp", axis, x.ndim(), loc);
  std::vector<int> to_front(static_cast<size_t>(x.ndim()));
  std::iota(to_front.begin(), to_front.end(), 0);
  to_front.erase(to_front.begin() + a);
  to_front.insert(to_front.begin(), a);
  const Array xs = transpose(x, to_front, loc);
  Shape rest(xs.shape().begin() + 1, xs.shape().end());
  const Array init = full(rest, -std::numeric_limits<double>::infinity(), x.dtype(), loc);
  auto step = [](const Array& carry, const Array& v) {
    const Array next = logaddexp(carry, v);
    return std::make_pair(next, next);
  };
  const Array ys = scan(step, init, xs, -1, reverse, loc).second;
  std::vector<int> back(to_front.size());
  for (size_t i = 0; i < to_front.size(); ++i) back[static_cast<size_t>(to_front[i])] = static_cast<int>(i);
  return transpose(ys, back, loc);
}

}  // namespace graft
