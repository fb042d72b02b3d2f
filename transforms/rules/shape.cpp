// Transform rules of layout ops: all linear, so each JVP applies the op to
// the tangent (pad also to the padding value's tangent).
#include "transforms/rules/jvp_rule.h"

namespace graft::transforms {
namespace {

using ir::Op;
using Out = std::vector<ValueId>;

Out unary_linear(JvpCtx& c) { return {c.linear({0})}; }
Out pad_rule(JvpCtx& c) { return {c.linear({0, 1})}; }

Out concatenate_rule(JvpCtx& c) {
  std::vector<size_t> all(c.primals.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  return {c.linear(all)};
}

}  // namespace

void register_shape_jvp_rules(JvpRuleTable& t) {
  for (Op op : {Op::broadcast_in_dim, Op::reshape, Op::transpose, Op::rev, Op::slice})
    t[static_cast<size_t>(op)] = unary_linear;
  t[static_cast<size_t>(Op::pad)] = pad_rule;
  t[static_cast<size_t>(Op::concatenate)] = concatenate_rule;
}

}  // namespace graft::transforms
