// Shape/dtype rules of collectives over a named axis (`axis_name`). The size
// of the named axis is not visible in operand shapes, so ops whose result
// shape depends on it carry `axis_size` (as JAX's all_gather does).
//
// psum, pmax, pmin: same type.      ppermute: same type; `perm` is a flat
// list of (source, destination) pairs, sources and destinations unique.
// all_gather: `axis`, `tiled`: stacked inserts a new axis of axis_size at
// `axis`; tiled multiplies axis `axis` by axis_size.
// psum_scatter: the inverse of all_gather's shape (its transpose).
// all_to_all: `split_axis` splits into axis_size chunks (chunk j goes to
// replica j), the chunks received are concatenated along `concat_axis`:
// split_axis shrinks by axis_size, concat_axis grows by it (JAX's tiled form;
// the untiled form is a reshape around it, api/collectives.cpp).
// axis_index: i32[], this replica's position along the axis.
#include "ir/shape_rules/rule.h"

namespace graft::ir {
namespace {

using Types = std::vector<ValueType>;

void check_name(const RuleCtx& c) {
  if (c.attr_string("axis_name").empty()) c.shape_error("axis_name must not be empty");
}

int64_t axis_size(const RuleCtx& c) {
  int64_t n = c.attr_int("axis_size");
  if (n < 1 || n > (int64_t{1} << 20)) c.shape_error("axis_size " + std::to_string(n) + " is out of range");
  return n;
}

OutTypes same_type(const RuleCtx& c) {
  check_name(c);
  check_accepted_dtype(c, c.input(0).dtype);  // psum: numbers; pmax, pmin: ordered (no complex, whose max is undefined)
  return {c.input(0)};
}

}  // namespace

OutTypes psum_shape(const RuleCtx& c) { return same_type(c); }
OutTypes pmax_shape(const RuleCtx& c) { return same_type(c); }
OutTypes pmin_shape(const RuleCtx& c) { return same_type(c); }

OutTypes all_gather_shape(const RuleCtx& c) {
  check_name(c);
  const ValueType& x = c.input(0);
  int64_t n = axis_size(c);
  bool tiled = c.attr_bool("tiled");
  Shape out = x.shape;
  if (tiled) {
    int ax = c.axis(c.attr_int("axis"), x.rank(), "axis");
    out[ax] *= n;
  } else {
    int ax = c.axis(c.attr_int("axis"), x.rank() + 1, "axis");
    out.insert(out.begin() + ax, n);
  }
  c.check_shape(out, "result");
  return {ValueType{x.dtype, out}};
}

OutTypes psum_scatter_shape(const RuleCtx& c) {
  check_name(c);
  const ValueType& x = c.input(0);
  if (x.dtype == DType::bool_) c.dtype_error("needs a numeric operand, got bool");
  int64_t n = axis_size(c);
  int ax = c.axis(c.attr_int("axis"), x.rank(), "axis");
  Shape out = x.shape;
  if (c.attr_bool("tiled")) {
    if (out[ax] % n != 0)
      c.shape_error("axis " + std::to_string(ax) + " of size " + std::to_string(out[ax]) +
                    " does not divide by axis_size " + std::to_string(n));
    out[ax] /= n;
  } else {
    if (out[ax] != n) c.shape_error("axis " + std::to_string(ax) + " must have axis_size " + std::to_string(n));
    out.erase(out.begin() + ax);
  }
  return {ValueType{x.dtype, out}};
}

OutTypes all_to_all_shape(const RuleCtx& c) {
  check_name(c);
  const ValueType& x = c.input(0);
  const int64_t n = axis_size(c);
  const int split = c.axis(c.attr_int("split_axis"), x.rank(), "split_axis");
  const int concat = c.axis(c.attr_int("concat_axis"), x.rank(), "concat_axis");
  Shape out = x.shape;
  if (out[split] % n != 0)
    c.shape_error("split_axis " + std::to_string(split) + " of size " + std::to_string(out[split]) +
                  " does not divide by axis_size " + std::to_string(n));
  out[split] /= n;
  out[concat] *= n;
  return {ValueType{x.dtype, out}};
}

OutTypes ppermute_shape(const RuleCtx& c) {
  check_name(c);
  const Ints& perm = c.attr_ints("perm");
  if (perm.size() % 2 != 0) c.shape_error("perm must hold (source, destination) pairs");
  std::vector<int64_t> sources, dests;
  for (size_t i = 0; i < perm.size(); i += 2) {
    if (perm[i] < 0 || perm[i + 1] < 0) c.shape_error("perm entries must be non-negative");
    for (int64_t s : sources)
      if (s == perm[i]) c.shape_error("source " + std::to_string(s) + " appears twice in perm");
    for (int64_t d : dests)
      if (d == perm[i + 1]) c.shape_error("destination " + std::to_string(d) + " appears twice in perm");
    sources.push_back(perm[i]);
    dests.push_back(perm[i + 1]);
  }
  return {c.input(0)};
}

OutTypes axis_index_shape(const RuleCtx& c) {
  check_name(c);
  return {ValueType{DType::i32, {}}};
}

}  // namespace graft::ir
