// Transform rules of reductions and cumulative scans. JVP rules below.
#include <algorithm>

#include "transforms/rules/jvp_rule.h"

namespace graft::transforms {
namespace {

using ir::Op;
using Out = std::vector<ValueId>;

Out linear_rule(JvpCtx& c) { return {c.linear({0})}; }

// The result broadcast back over the reduced axes (for comparisons with x).
ValueId broadcast_back(JvpCtx& c, ValueId reduced, ValueId x) {
  const ir::ValueType xt = c.type(x);  // a copy: adding nodes may move the builder's type table
  const ir::Ints& axes = std::get<ir::Ints>(*c.attrs().find("axes"));
  ir::Ints kept;
  for (int64_t d = 0; d < xt.rank(); ++d)
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) kept.push_back(d);
  return c.add(Op::broadcast_in_dim, {reduced}, {{"shape", ir::Ints(xt.shape)}, {"broadcast_dimensions", kept}});
}

// max/min: the tangent averaged over the positions that attain the extreme.
Out extreme_rule(JvpCtx& c) {
  if (c.tangents[0] == kZero) return {kZero};
  ValueId x = c.primals[0];
  ValueId hit = c.add(Op::eq, {x, broadcast_back(c, c.outputs[0], x)});
  ValueId weights = c.add(Op::convert_element_type, {hit}, {{"new_dtype", c.type(x).dtype}});
  ValueId count = c.add(Op::reduce_sum, {weights}, c.attrs());
  ValueId picked = c.add(Op::reduce_sum, {c.add(Op::mul, {c.tangents[0], weights})}, c.attrs());
  return {c.add(Op::div, {picked, count})};
}

}  // namespace

void register_reduce_jvp_rules(JvpRuleTable& t) {
  t[static_cast<size_t>(Op::reduce_sum)] = linear_rule;
  t[static_cast<size_t>(Op::cumsum)] = linear_rule;
  t[static_cast<size_t>(Op::reduce_max)] = extreme_rule;
  t[static_cast<size_t>(Op::reduce_min)] = extreme_rule;
}

}  // namespace graft::transforms
