#include "transforms/rules/transpose_rule.h"

#include "ir/dtype.h"

namespace graft::transforms {

ValueId TransposeCtx::zeros(const ir::ValueType& type) {
  // A scalar zero of the dtype, broadcast: built through a scalar stand-in.
  ir::Literal lit{ir::ValueType{type.dtype, {}}, std::vector<uint8_t>(ir::dtype_size(type.dtype), 0)};
  ValueId s = add(ir::Op::constant, {}, {{"value", std::make_shared<const ir::Literal>(std::move(lit))}});
  if (type.rank() == 0) return s;
  return add(ir::Op::broadcast_in_dim, {s}, {{"shape", ir::Ints(type.shape)}, {"broadcast_dimensions", ir::Ints{}}});
}

namespace {

TransposeRuleTable build_table() {
  TransposeRuleTable t{};
  register_elementwise_transpose_rules(t);
  register_reduce_transpose_rules(t);
  register_shape_transpose_rules(t);
  register_indexing_transpose_rules(t);
  register_linalg_transpose_rules(t);
  register_custom_transpose_rules(t);
  return t;
}

}  // namespace

TransposeRule transpose_rule(ir::Op op) {
  static const TransposeRuleTable table = build_table();
  return table[static_cast<size_t>(op)];
}

}  // namespace graft::transforms
