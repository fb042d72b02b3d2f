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

template <bool BoolOnly>
OutTypes reduce_rule(const RuleCtx& c) {
  DType d = c.input(0).dtype;
  if (BoolOnly && is_floating(d)) c.dtype_error(std::string("needs bool or integer operands, got ") + dtype_name(d));
  if (!BoolOnly && d == DType::bool_ && c.op() != Op::reduce_max && c.op() != Op::reduce_min)
    c.dtype_error("needs a numeric operand, got bool");
  return {ValueType{d, reduced_shape(c, c.input(0).shape, c.attr_ints("axes"))}};
}

OutTypes arg_rule(const RuleCtx& c) {
  const ValueType& x = c.input(0);
  int ax = c.axis(c.attr_int("axis"), x.rank(), "axis");
  if (x.shape[ax] == 0) c.shape_error("cannot take an arg-reduction over an empty axis");
  DType index = c.attr_dtype("index_dtype");
  if (index != DType::i32 && index != DType::i64)
    c.dtype_error(std::string("index_dtype must be i32 or i64, got ") + dtype_name(index));
  Shape out = x.shape;
  out.erase(out.begin() + ax);
  return {ValueType{index, out}};
}

OutTypes cumulative_rule(const RuleCtx& c) {
  const ValueType& x = c.input(0);
  c.axis(c.attr_int("axis"), x.rank(), "axis");
  c.attr_bool("reverse");
  if (x.dtype == DType::bool_) c.dtype_error("needs a numeric operand, got bool");
  return {x};
}

}  // namespace

OutTypes reduce_sum_shape(const RuleCtx& c) { return reduce_rule<false>(c); }
OutTypes reduce_max_shape(const RuleCtx& c) { return reduce_rule<false>(c); }
OutTypes reduce_min_shape(const RuleCtx& c) { return reduce_rule<false>(c); }
OutTypes reduce_prod_shape(const RuleCtx& c) { return reduce_rule<false>(c); }
OutTypes reduce_and_shape(const RuleCtx& c) { return reduce_rule<true>(c); }
OutTypes reduce_or_shape(const RuleCtx& c) { return reduce_rule<true>(c); }
OutTypes argmax_shape(const RuleCtx& c) { return arg_rule(c); }
OutTypes argmin_shape(const RuleCtx& c) { return arg_rule(c); }
OutTypes cumsum_shape(const RuleCtx& c) { return cumulative_rule(c); }
OutTypes cumprod_shape(const RuleCtx& c) { return cumulative_rule(c); }
OutTypes cummax_shape(const RuleCtx& c) { return cumulative_rule(c); }
OutTypes cummin_shape(const RuleCtx& c) { return cumulative_rule(c); }

}  // namespace graft::ir
