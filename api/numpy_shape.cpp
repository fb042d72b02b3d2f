// NumPy's split, tile, repeat, outer and arange(start, stop, step), lowered to
// layout primitives (slice, broadcast_in_dim, reshape) and iota, so their
// derivatives and batching come from those primitives' rules.
#include <cmath>

#include "api/array_impl.h"
#include "api/dispatch.h"
#include "api/lowering.h"
#include "graft/errors.h"
#include "graft/ops.h"

namespace graft {

using ir::Op;

namespace {

// x[start:stop] along one axis (NumPy's clamping of the bounds), everything along the others.
Array take_range(const Array& x, int axis, int64_t start, int64_t stop, const Loc& loc) {
  Shape lo(x.ndim(), 0), hi = x.shape();
  lo[axis] = start;
  hi[axis] = stop;
  return slice(x, lo, hi, {}, loc);
}

void check_not_scalar(const char* name, const Array& x, const Loc& loc) {
  if (detail::checked_impl(x, name).type.shape.empty())
    throw ShapeError(std::string(name) + ": needs an array with at least one axis, got " + detail::describe(x) +
                     detail::where(loc));
}

}  // namespace

std::vector<Array> split(const Array& x, SplitSections split_sections, int axis, Loc loc) {
  const int64_t sections = split_sections.n;
  check_not_scalar("split", x, loc);
  int a = detail::normalize_axis("split", axis, x.ndim(), loc);
  int64_t n = x.shape()[a];
  if (sections <= 0 || n % sections != 0)
    throw ShapeError("split: " + std::to_string(sections) + " sections do not divide axis " + std::to_string(a) +
                     " of " + detail::describe(x) + " equally" + detail::where(loc));
  std::vector<Array> pieces;
  for (int64_t k = 0; k < sections; ++k) pieces.push_back(take_range(x, a, k * n / sections, (k + 1) * n / sections, loc));
  return pieces;
}

std::vector<Array> split(const Array& x, std::vector<int64_t> indices, int axis, Loc loc) {
  check_not_scalar("split", x, loc);
  int a = detail::normalize_axis("split", axis, x.ndim(), loc);
  int64_t n = x.shape()[a];
  std::vector<Array> pieces;
  // Each piece is x[indices[k-1]:indices[k]] with slice's clamping, so
  // decreasing or out-of-range indices give empty pieces, as in NumPy.
  for (size_t k = 0; k <= indices.size(); ++k) {
    int64_t start = k == 0 ? 0 : indices[k - 1];
    int64_t stop = k == indices.size() ? n : indices[k];
    pieces.push_back(take_range(x, a, start, stop, loc));
  }
  return pieces;
}

// Broadcast into shape [r0, s0, r1, s1, ...] (x's axes at the odd positions),
// then merge each pair: copy k of the block along axis i is index k of r_i.
Array tile(const Array& x, Shape reps, Loc loc) {
  for (int64_t r : reps)
    if (r < 0)
      throw ShapeError("tile: negative repetition in " + ir::shape_str(reps) + " for " + detail::describe(x) +
                       detail::where(loc));
  Shape s = detail::checked_impl(x, "tile").type.shape;
  size_t rank = std::max(s.size(), reps.size());
  s.insert(s.begin(), rank - s.size(), 1);
  reps.insert(reps.begin(), rank - reps.size(), 1);
  Shape wide, out;
  ir::Ints dims;
  for (size_t i = 0; i < rank; ++i) {
    wide.push_back(reps[i]);
    wide.push_back(s[i]);
    dims.push_back(static_cast<int64_t>(2 * i + 1));
    out.push_back(ir::checked_num_elements({reps[i], s[i]}));
    if (out.back() < 0 || out.back() > ir::kMaxDim)
      throw ShapeError("tile: result of " + detail::describe(x) + " tiled " + ir::shape_str(reps) + " is too large" +
                       detail::where(loc));
  }
  Array block = reshape(x, s, loc);
  Array spread = detail::bind1(Op::broadcast_in_dim, {block}, {{"shape", ir::Ints(wide)}, {"broadcast_dimensions", dims}}, loc);
  return reshape(spread, out, loc);
}

// A new axis of size `repeats` right after `axis`, then merged into it.
Array repeat(const Array& x, int64_t repeats, int axis, Loc loc) {
  check_not_scalar("repeat", x, loc);
  int a = detail::normalize_axis("repeat", axis, x.ndim(), loc);
  if (repeats < 0 || repeats > ir::kMaxDim)
    throw ShapeError("repeat: invalid repeat count " + std::to_string(repeats) + " for " + detail::describe(x) +
                     detail::where(loc));
  const Shape& s = x.shape();
  Shape wide, out = s;
  ir::Ints dims;
  for (int i = 0; i < x.ndim(); ++i) {
    dims.push_back(static_cast<int64_t>(wide.size()));
    wide.push_back(s[i]);
    if (i == a) wide.push_back(repeats);
  }
  out[a] = ir::checked_num_elements({s[a], repeats});
  if (out[a] < 0 || out[a] > ir::kMaxDim)
    throw ShapeError("repeat: result of " + detail::describe(x) + " repeated " + std::to_string(repeats) +
                     " times is too large" + detail::where(loc));
  Array spread = detail::bind1(Op::broadcast_in_dim, {x}, {{"shape", ir::Ints(wide)}, {"broadcast_dimensions", dims}}, loc);
  return reshape(spread, out, loc);
}

Array repeat(const Array& x, int64_t repeats, Loc loc) { return repeat(reshape(x, {-1}, loc), repeats, 0, loc); }

Array outer(const Array& a, const Array& b, Loc loc) {
  Array col = reshape(a, {-1, 1}, loc);
  Array row = reshape(b, {1, -1}, loc);
  return ArrayAt(col, loc) * row;
}

namespace detail {

Array arange_range(double start, double stop, double step, std::optional<DType> dtype, bool any_float, const Loc& loc) {
  auto bad = [&](const std::string& what) {
    return ShapeError("arange: " + what + " for start " + std::to_string(start) + ", stop " + std::to_string(stop) +
                      ", step " + std::to_string(step) + where(loc));
  };
  if (!std::isfinite(start) || !std::isfinite(stop) || !std::isfinite(step)) throw bad("bounds must be finite");
  if (step == 0) throw bad("step must not be zero");
  DType d = dtype.value_or(any_float ? default_float_dtype() : default_int_dtype());
  if (d == DType::bool_) throw DTypeError("arange: cannot make a range of bool" + where(loc));
  double count = std::ceil((stop - start) / step);
  if (count > static_cast<double>(ir::kMaxDim)) throw bad("too many elements");
  int64_t n = count > 0 ? static_cast<int64_t>(count) : 0;
  // Signed integers with integral start and step are exact in their own dtype;
  // everything else is start + i * step in f64, converted at the end.
  bool integral = start == std::trunc(start) && step == std::trunc(step);
  DType work = (d == DType::i32 || d == DType::i64) && integral ? d : DType::f64;
  Array i = bind1(Op::iota, {}, {{"dtype", work}, {"shape", ir::Ints{n}}, {"dimension", int64_t{0}}}, loc);
  bool weak_float = work == DType::f64;
  Array scaled = step == 1 ? i : binary_with_scalar(BinaryOp::mul, i, step, weak_float, false, loc);
  Array shifted = start == 0 ? scaled : binary_with_scalar(BinaryOp::add, scaled, start, weak_float, false, loc);
  return convert(shifted, d, loc);
}

}  // namespace detail
}  // namespace graft
