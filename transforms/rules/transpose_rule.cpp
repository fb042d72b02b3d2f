#include "transforms/rules/transpose_rule.h"


namespace graft::transforms {

ValueId TransposeCtx::zeros(const ir::ValueType& type) { return emit_full(emit_.builder(), 0.0, type, &node()); }

namespace {

TransposeRuleTable build_table() {
  TransposeRuleTable t{};
  register_elementwise_transpose_rules(t);
  register_reduce_transpose_rules(t);
  register_shape_transpose_rules(t);
  register_indexing_transpose_rules(t);
  register_linalg_transpose_rules(t);
  register_custom_transpose_rules(t);
  register_control_flow_transpose_rules(t);
  register_collective_transpose_rules(t);
  return t;
}

}  // namespace

TransposeRule transpose_rule(ir::Op op) {
  static const TransposeRuleTable table = build_table();
  return table[static_cast<size_t>(op)];
}

}  // namespace graft::transforms
