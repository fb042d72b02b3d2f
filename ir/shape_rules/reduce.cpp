// Shape/dtype rules of reductions (over a set of `axes`), arg-reductions
// (over one `axis`, yielding `index_dtype`) and cumulative scans (one `axis`).
#include <algorithm>

#include "ir/dtype.h"
#include "ir/shape_rules/rule.h"

namespace graft::ir {
namespace {

using Types = std::vector<ValueType>;

Shape reduced_shape(const RuleCtx& c, const Shape& in, const Ints& axes) {
  int rank = static_cast<int>(in.size());
  std::vector<bool> drop(rank, false);
  for (int64_t a : axes) {
    int ax = c.axis(a, rank, "reduction axis");
    if (drop[ax]) c.shape_error("reduction axis " + std::to_string(a) + " is repeated in " + shape_str(axes));
    drop[ax] = true;
  }
  Shape out;
  for (int i = 0; i < rank; ++i)
    if (!drop[i]) out.push_back(in[i]);
  return out;
}

}  // namespace

// REDUCES_AXES: the reductions.
OutTypes reduces_axes_rule(const RuleCtx& c) {
  DType d = c.input(0).dtype;
  check_accepted_dtype(c, d);
  return {ValueType{d, reduced_shape(c, c.input(0).shape, c.attr_ints("axes"))}};
}

// REDUCES_AXIS: argmax and argmin, yielding `index_dtype`.
OutTypes reduces_axis_rule(const RuleCtx& c) {
  const ValueType& x = c.input(0);
  check_accepted_dtype(c, x.dtype);
  int ax = c.axis(c.attr_int("axis"), x.rank(), "axis");
  if (x.shape[ax] == 0) c.shape_error("cannot take an arg-reduction over an empty axis");
  DType index = c.attr_dtype("index_dtype");
  if (index != DType::i32 && index != DType::i64)
    c.dtype_error(std::string("index_dtype must be i32 or i64, got ") + dtype_name(index));
  Shape out = x.shape;
  out.erase(out.begin() + ax);
  return {ValueType{index, out}};
}

// SCANS_AXIS: the cumulative ops.
OutTypes scans_axis_rule(const RuleCtx& c) {
  const ValueType& x = c.input(0);
  c.axis(c.attr_int("axis"), x.rank(), "axis");
  c.attr_bool("reverse");
  check_accepted_dtype(c, x.dtype);
  return {x};
}

}  // namespace graft::ir
