// Transform rules of indexing: linear in the data operands, constant in the
// indices. JVP rules below.
#include "transforms/rules/jvp_rule.h"

namespace graft::transforms {
namespace {

using ir::Op;
using Out = std::vector<ValueId>;

Out in_operand(JvpCtx& c) { return {c.linear({0})}; }
Out in_operand_and_update(JvpCtx& c) { return {c.linear({0, 1})}; }
Out scatter_add_rule(JvpCtx& c) { return {c.linear({0, 2})}; }

}  // namespace

void register_indexing_jvp_rules(JvpRuleTable& t) {
  t[static_cast<size_t>(Op::dynamic_slice)] = in_operand;
  t[static_cast<size_t>(Op::gather)] = in_operand;
  t[static_cast<size_t>(Op::dynamic_update_slice)] = in_operand_and_update;
  t[static_cast<size_t>(Op::scatter_add)] = scatter_add_rule;
}

}  // namespace graft::transforms
