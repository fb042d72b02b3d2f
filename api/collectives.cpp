// Collectives over named axes, and the stack of bound axis names they check.
#include <vector>

#include "api/dispatch.h"
#include "api/lowering.h"
#include "graft/collectives.h"
#include "graft/errors.h"
#include "ir/dtype.h"
#include "ir/value.h"

namespace graft {

using ir::Op;

namespace detail {
namespace {

struct BoundAxis {
  std::string name;
  int64_t size;
};

std::vector<BoundAxis>& bound_axes() {
  thread_local std::vector<BoundAxis> axes;
  return axes;
}

}  // namespace

AxisFrame::AxisFrame(std::string name, int64_t size) : pushed_(!name.empty()) {
  if (pushed_) bound_axes().push_back({std::move(name), size});
}

AxisFrame::~AxisFrame() {
  if (pushed_) bound_axes().pop_back();
}

int64_t bound_axis_size(const std::string& name) {
  const auto& axes = bound_axes();
  for (auto it = axes.rbegin(); it != axes.rend(); ++it)
    if (it->name == name) return it->size;
  return -1;
}

}  // namespace detail

namespace {

// The size of the bound axis `name`, or a ShapeError naming the ones bound.
int64_t checked_axis(const char* op, const std::string& name, const Loc& loc) {
  int64_t size = detail::bound_axis_size(name);
  if (size >= 0) return size;
  std::string msg = op;
  msg += ": unbound axis name '";
  msg += name;
  msg += "' (collectives need an enclosing vmap or pmap with that axis_name)";
  msg += detail::where(loc);
  throw ShapeError(msg);
}

Array named(Op op, const char* what, const Array& x, const std::string& name, const Loc& loc) {
  checked_axis(what, name, loc);
  return detail::bind1(op, {x}, {{"axis_name", name}}, loc);
}

}  // namespace

Array psum(const Array& x, const std::string& axis_name, Loc loc) {
  Array in = x.dtype() == DType::bool_ ? detail::convert(x, DType::i32, loc) : x;
  return named(Op::psum, "psum", in, axis_name, loc);
}

Array pmean(const Array& x, const std::string& axis_name, Loc loc) {
  int64_t n = checked_axis("pmean", axis_name, loc);
  Array xf = ir::is_floating(x.dtype()) ? x : detail::convert(x, default_float_dtype(), loc);
  return psum(xf, axis_name, loc) / static_cast<double>(n);
}

Array pmax(const Array& x, const std::string& axis_name, Loc loc) { return named(Op::pmax, "pmax", x, axis_name, loc); }
Array pmin(const Array& x, const std::string& axis_name, Loc loc) { return named(Op::pmin, "pmin", x, axis_name, loc); }

Array all_gather(const Array& x, const std::string& axis_name, int axis, bool tiled, Loc loc) {
  int64_t n = checked_axis("all_gather", axis_name, loc);
  int a = detail::normalize_axis("all_gather", axis, tiled ? x.ndim() : x.ndim() + 1, loc);
  return detail::bind1(Op::all_gather, {x},
                       {{"axis_name", axis_name}, {"axis_size", n}, {"axis", int64_t{a}}, {"tiled", int64_t{tiled}}},
                       loc);
}

Array psum_scatter(const Array& x, const std::string& axis_name, int scatter_dimension, bool tiled, Loc loc) {
  int64_t n = checked_axis("psum_scatter", axis_name, loc);
  int a = detail::normalize_axis("psum_scatter", scatter_dimension, x.ndim(), loc);
  Array in = x.dtype() == DType::bool_ ? detail::convert(x, DType::i32, loc) : x;
  return detail::bind1(Op::psum_scatter, {in},
                       {{"axis_name", axis_name}, {"axis_size", n}, {"axis", int64_t{a}}, {"tiled", int64_t{tiled}}},
                       loc);
}

Array all_to_all(const Array& x, const std::string& axis_name, int split_axis, int concat_axis, bool tiled, Loc loc) {
  const int64_t n = checked_axis("all_to_all", axis_name, loc);
  int split = detail::normalize_axis("all_to_all", split_axis, x.ndim(), loc);
  int concat = detail::normalize_axis("all_to_all", concat_axis, x.ndim(), loc);
  auto bind = [&](const Array& v, int s, int c) {
    return detail::bind1(Op::all_to_all, {v},
                         {{"axis_name", axis_name}, {"axis_size", n}, {"split_axis", int64_t{s}}, {"concat_axis", int64_t{c}}},
                         loc);
  };
  if (tiled || split == concat) return bind(x, split, concat);
  if (x.shape()[static_cast<size_t>(split)] != n) {
    std::string msg = "all_to_all: split_axis ";
    msg += std::to_string(split);
    msg += " of " + ir::shape_str(x.shape()) + " must have the size of axis '" + axis_name + "' (" +
           std::to_string(n) + ") unless tiled";
    msg += detail::where(loc);
    throw ShapeError(msg);
  }
  // The primitive is the tiled form: a size-1 axis at concat_axis receives
  // the n chunks, and the split axis, left with size 1, is dropped.
  Shape expanded = x.shape();
  const int at = split < concat ? concat + 1 : concat;
  expanded.insert(expanded.begin() + at, 1);
  if (concat < split) ++split;
  Array y = bind(reshape(x, expanded, loc), split, at);
  Shape squeezed = y.shape();
  squeezed.erase(squeezed.begin() + split);
  return reshape(y, squeezed, loc);
}

Array ppermute(const Array& x, const std::string& axis_name, std::vector<std::pair<int, int>> perm, Loc loc) {
  int64_t n = checked_axis("ppermute", axis_name, loc);
  ir::Ints flat;
  for (auto [s, d] : perm) {
    if (s < 0 || s >= n || d < 0 || d >= n) {
      std::string msg = "ppermute: pair (";
      msg += std::to_string(s);
      msg += ", ";
      msg += std::to_string(d);
      msg += ") is outside axis '";
      msg += axis_name;
      msg += "' of size ";
      msg += std::to_string(n);
      msg += detail::where(loc);
      throw ShapeError(msg);
    }
    flat.push_back(s);
    flat.push_back(d);
  }
  return detail::bind1(Op::ppermute, {x}, {{"axis_name", axis_name}, {"perm", flat}}, loc);
}

Array axis_index(const std::string& axis_name, Loc loc) {
  checked_axis("axis_index", axis_name, loc);
  return detail::bind1(Op::axis_index, {}, {{"axis_name", axis_name}}, loc);
}

}  // namespace graft
