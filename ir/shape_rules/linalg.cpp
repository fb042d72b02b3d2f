// Shape/dtype rule of dot_general (XLA's): result axes are the batch axes,
// then lhs's free axes, then rhs's free axes.
#include "ir/shape_rules/rule.h"

namespace graft::ir {

OutTypes dot_general_shape(const RuleCtx& c) {
  const ValueType& a = c.input(0);
  const ValueType& b = c.input(1);
  if (a.dtype != b.dtype)
    c.dtype_error(std::string("operand dtypes ") + dtype_name(a.dtype) + " and " + dtype_name(b.dtype) + " differ");
  if (a.dtype == DType::bool_) c.dtype_error("needs numeric operands, got bool");
  const Ints& lc = c.attr_ints("lhs_contracting");
  const Ints& rc = c.attr_ints("rhs_contracting");
  const Ints& lb = c.attr_ints("lhs_batch");
  const Ints& rb = c.attr_ints("rhs_batch");
  if (lc.size() != rc.size()) c.shape_error("lhs_contracting and rhs_contracting differ in length");
  if (lb.size() != rb.size()) c.shape_error("lhs_batch and rhs_batch differ in length");

  auto mark = [&](const Ints& axes, std::vector<bool>& used, int rank, const char* side) {
    for (int64_t ax : axes) {
      int i = c.axis(ax, rank, std::string(side) + " axis");
      if (used[i]) c.shape_error(std::string(side) + " axis " + std::to_string(ax) + " is used twice");
      used[i] = true;
    }
  };
  std::vector<bool> lused(a.rank(), false), rused(b.rank(), false);
  mark(lc, lused, a.rank(), "lhs");
  mark(lb, lused, a.rank(), "lhs");
  mark(rc, rused, b.rank(), "rhs");
  mark(rb, rused, b.rank(), "rhs");
  for (size_t i = 0; i < lc.size(); ++i)
    if (a.shape[lc[i]] != b.shape[rc[i]])
      c.shape_error("contracting sizes differ: lhs axis " + std::to_string(lc[i]) + " has " +
                    std::to_string(a.shape[lc[i]]) + ", rhs axis " + std::to_string(rc[i]) + " has " +
                    std::to_string(b.shape[rc[i]]));
  Shape out;
  for (size_t i = 0; i < lb.size(); ++i) {
    if (a.shape[lb[i]] != b.shape[rb[i]]) c.shape_error("batch sizes differ at batch dimension " + std::to_string(i));
    out.push_back(a.shape[lb[i]]);
  }
  for (int i = 0; i < a.rank(); ++i)
    if (!lused[i]) out.push_back(a.shape[i]);
  for (int i = 0; i < b.rank(); ++i)
    if (!rused[i]) out.push_back(b.shape[i]);
  c.check_shape(out, "result");
  return {ValueType{a.dtype, out}};
}

}  // namespace graft::ir
