// Transform rules of dot_general. JVP: bilinear, d(a.b) = da.b + a.db.
#include "transforms/rules/jvp_rule.h"

namespace graft::transforms {
namespace {

using ir::Op;
using Out = std::vector<ValueId>;

Out dot_general_rule(JvpCtx& c) {
  ValueId a = c.tangents[0] == kZero ? kZero : c.add(Op::dot_general, {c.tangents[0], c.primals[1]}, c.attrs());
  ValueId b = c.tangents[1] == kZero ? kZero : c.add(Op::dot_general, {c.primals[0], c.tangents[1]}, c.attrs());
  return {c.tadd(a, b)};
}

}  // namespace

void register_linalg_jvp_rules(JvpRuleTable& t) { t[static_cast<size_t>(Op::dot_general)] = dot_general_rule; }

}  // namespace graft::transforms
