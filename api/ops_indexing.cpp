// Indexing and sorting, lowered to gather/scatter_add/dynamic_*/sort.
#include "api/array_impl.h"
#include "api/dispatch.h"
#include "api/lowering.h"
#include "graft/errors.h"
#include "graft/ops.h"

namespace graft {

using ir::Op;

namespace {

void check_integer_starts(const char* name, const Array& a, const Loc& loc) {
  if (!ir::is_integer(detail::checked_impl(a, name).type.dtype))
    throw DTypeError(std::string(name) + ": indices must be integers, got " + detail::describe(a) + detail::where(loc));
}

std::vector<Array> scalar_starts(const char* name, const Array& x, std::vector<Array> start, const Loc& loc) {
  if (static_cast<int>(start.size()) != x.ndim())
    throw ShapeError(std::string(name) + ": needs " + std::to_string(x.ndim()) + " start indices for " +
                     detail::describe(x) + ", got " + std::to_string(start.size()) + detail::where(loc));
  for (Array& s : start) {
    check_integer_starts(name, s, loc);
    if (s.ndim() != 0) throw ShapeError(std::string(name) + ": start indices must be scalars" + detail::where(loc));
    s = detail::convert(s, DType::i32, loc);
  }
  return start;
}

// Indices with negatives wrapped (x.shape[axis] added), in i32 or i64.
Array wrap_negative(const Array& indices, int64_t size, const Loc& loc) {
  if (indices.dtype() == DType::u32) return indices;
  Array zero = detail::broadcast_to_shape(scalar(0, indices.dtype(), loc), indices.shape(), loc);
  Array n = detail::broadcast_to_shape(scalar(static_cast<double>(size), indices.dtype(), loc), indices.shape(), loc);
  Array neg = detail::bind1(Op::lt, {indices, zero}, {}, loc);
  return detail::bind1(Op::select, {neg, detail::bind1(Op::add, {indices, n}, {}, loc), indices}, {}, loc);
}

}  // namespace

Array dynamic_slice(const Array& x, std::vector<Array> start, Shape sizes, Loc loc) {
  std::vector<Array> args = {x};
  for (Array& s : scalar_starts("dynamic_slice", x, std::move(start), loc)) args.push_back(s);
  return detail::bind1(Op::dynamic_slice, args, {{"slice_sizes", ir::Ints(sizes)}}, loc);
}

Array dynamic_update_slice(const Array& x, const Array& update, std::vector<Array> start, Loc loc) {
  std::vector<Array> args = {x, detail::convert(update, x.dtype(), loc)};
  for (Array& s : scalar_starts("dynamic_update_slice", x, std::move(start), loc)) args.push_back(s);
  return detail::bind1(Op::dynamic_update_slice, args, {}, loc);
}

Array take(const Array& x, const Array& indices, int axis, Loc loc) {
  check_integer_starts("take", indices, loc);
  int a = detail::normalize_axis("take", axis, x.ndim(), loc);
  Array idx = wrap_negative(indices, x.shape()[a], loc);
  return detail::bind1(Op::gather, {x, idx}, {{"axis", int64_t{a}}, {"batch_dims", int64_t{0}}}, loc);
}

Array scatter_add(const Array& x, const Array& indices, const Array& updates, int axis, Loc loc) {
  check_integer_starts("scatter_add", indices, loc);
  int a = detail::normalize_axis("scatter_add", axis, x.ndim(), loc);
  Array idx = wrap_negative(indices, x.shape()[a], loc);
  Shape want(x.shape().begin(), x.shape().begin() + a);
  want.insert(want.end(), indices.shape().begin(), indices.shape().end());
  want.insert(want.end(), x.shape().begin() + a + 1, x.shape().end());
  Array u = detail::broadcast_to_shape(detail::convert(updates, x.dtype(), loc), want, loc);
  return detail::bind1(Op::scatter_add, {x, idx, u}, {{"axis", int64_t{a}}, {"batch_dims", int64_t{0}}}, loc);
}

Array sort(const Array& x, int axis, Loc loc) {
  int a = detail::normalize_axis("sort", axis, x.ndim(), loc);
  return detail::bind(Op::sort, {x}, {{"dimension", int64_t{a}}, {"num_keys", int64_t{1}}, {"is_stable", int64_t{1}}},
                      loc)[0];
}

// Descending as jnp.argsort: the line and its positions reversed, sorted
// ascending (stable), and the result reversed, so that equal elements keep
// their order.
Array argsort(const Array& x, int axis, bool descending, Loc loc) {
  int a = detail::normalize_axis("argsort", axis, x.ndim(), loc);
  Array keys = x;
  Array iota = detail::bind1(Op::iota, {}, {{"dtype", DType::i32}, {"shape", ir::Ints(x.shape())}, {"dimension", int64_t{a}}},
                             loc);
  const ir::Attrs rev{{"dimensions", ir::Ints{a}}};
  if (descending) {
    keys = detail::bind1(Op::rev, {keys}, rev, loc);
    iota = detail::bind1(Op::rev, {iota}, rev, loc);
  }
  Array out = detail::bind(Op::sort, {keys, iota},
                           {{"dimension", int64_t{a}}, {"num_keys", int64_t{1}}, {"is_stable", int64_t{1}}}, loc)[1];
  return descending ? detail::bind1(Op::rev, {out}, rev, loc) : out;
}

std::pair<Array, Array> top_k(const Array& x, int64_t k, Loc loc) {
  std::vector<Array> out = detail::bind(Op::top_k, {x}, {{"k", k}}, loc);
  return {out[0], out[1]};
}

// A binary search per entry of v, unrolled: ceil(log2(n + 1)) steps of a
// gather and a compare in NumPy's total order (NaN last, equal to NaN).
Array searchsorted(const Array& sorted, const Array& v, const std::string& side, Loc loc) {
  if (side != "left" && side != "right")
    throw Error("searchsorted: side must be \"left\" or \"right\", got \"" + side + "\"" + detail::where(loc));
  if (sorted.ndim() != 1)
    throw ShapeError("searchsorted: the sorted array must be 1-D, got " + detail::describe(sorted) +
                     detail::where(loc));
  const DType d = ir::promote_types(sorted.dtype(), v.dtype());  // one dtype for both, as JAX
  const Array a = detail::convert(sorted, d, loc), values = detail::convert(v, d, loc);
  const int64_t n = a.size();
  Array lo = zeros(values.shape(), DType::i32, loc), hi = full(values.shape(), static_cast<double>(n), DType::i32, loc);
  if (n == 0) return lo;
  // a < b in the total order: NaN after every number
  auto less = [&](const Array& p, const Array& q) {
    if (!ir::is_floating(d)) return p < q;
    return logical_or(p < q, logical_and(q != q, p == p, loc), loc);
  };
  for (int64_t span = n; span > 0; span /= 2) {
    const Array mid = floor_divide(lo + hi, 2, loc);
    const Array at = take(a, minimum(mid, static_cast<int32_t>(n - 1), loc), 0, loc);
    // go right of mid: a[mid] < v (left), a[mid] <= v, i.e. not v < a[mid] (right)
    const Array right = side == "left" ? less(at, values) : logical_not(less(values, at));
    const Array open = lo < hi;
    lo = where(logical_and(open, right, loc), mid + 1, lo, loc);
    hi = where(logical_and(open, logical_not(right), loc), mid, hi, loc);
  }
  return lo;  // floor(log2 n) + 1 = ceil(log2(n + 1)) steps close every interval
}

Array one_hot(const Array& labels, int64_t n, DType dtype, Loc loc) {
  check_integer_starts("one_hot", labels, loc);
  if (n < 0 || n > ir::kMaxDim) throw ShapeError("one_hot: invalid number of classes " + std::to_string(n) + detail::where(loc));
  Shape shape = labels.shape();
  shape.push_back(n);
  Array classes = detail::bind1(
      Op::iota, {}, {{"dtype", labels.dtype()}, {"shape", ir::Ints(shape)}, {"dimension", int64_t(shape.size() - 1)}}, loc);
  Array eq = detail::bind1(Op::eq, {detail::broadcast_to_shape(expand_dims(labels, -1, loc), shape, loc), classes}, {}, loc);
  return detail::convert(eq, dtype, loc);
}

}  // namespace graft
