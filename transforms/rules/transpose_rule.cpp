#include "transforms/rules/transpose_rule.h"


namespace graft::transforms {

using ir::Op;

ValueId TransposeCtx::zeros(const ir::ValueType& type) { return emit_full(emit_.builder(), 0.0, type, &node()); }

namespace {

TransposeRuleTable build_transpose_rule_table() {
  TransposeRuleTable t{};
  // Filled from ops.def: the rule of each op that must have one (see ir/op.h).
#define GRAFT_OP(ident, ...) \
  if constexpr (ir::has_transpose_rule(Op::ident)) t[static_cast<size_t>(Op::ident)] = ops::ident##_transpose;
#include "ir/ops.def"
#undef GRAFT_OP
  return t;
}

}  // namespace

TransposeRule transpose_rule(ir::Op op) {
  static const TransposeRuleTable table = build_transpose_rule_table();
  return table[static_cast<size_t>(op)];
}

}  // namespace graft::transforms
