#include "transforms/transpose.h"

#include "graft/errors.h"
#include "transforms/rules/transpose_rule.h"

namespace graft::transforms {

std::vector<ValueId> transpose_linear(const ir::Graph& j, const PartialEval& pe, ir::GraphBuilder& b,
                                      const std::vector<std::pair<ValueId, ValueId>>& seeds) {
  std::vector<ValueId> ct(j.value_id_bound(), kZero);
  auto accumulate = [&](ValueId v, ValueId c, const ir::Node* at) {
    if (c == kZero) return;
    if (ct[v] == kZero) {
      ct[v] = c;
      return;
    }
    ct[v] = at ? b.add1(ir::Op::add, {ct[v], c}, {}, at->loc, at->scope) : b.add1(ir::Op::add, {ct[v], c});
  };
  for (const auto& [value, cotangent] : seeds)
    if (pe.unknown[value]) accumulate(value, cotangent, nullptr);

  for (auto it = pe.linear_nodes.rbegin(); it != pe.linear_nodes.rend(); ++it) {
    const ir::Node& n = j.nodes()[*it];
    std::vector<ValueId> cts;
    bool any = false;
    for (ValueId v : n.outputs) {
      cts.push_back(ct[v]);
      any = any || ct[v] != kZero;
    }
    if (!any) continue;
    TransposeRule rule = transpose_rule(n.op);
    if (!rule)
      throw UnsupportedError("vjp: " + std::string(ir::op_name(n.op)) +
                             " appears in the tangent computation but has no transpose rule" +
                             (n.loc.empty() ? "" : " (at " + ir::loc_str(n.loc) + ")"));
    std::vector<ValueId> operands;
    std::vector<bool> operand_unknown;
    std::vector<ir::ValueType> types;
    for (ValueId v : n.inputs) {
      operands.push_back(pe.unknown[v] ? kZero : pe.known[v]);
      operand_unknown.push_back(pe.unknown[v]);
      types.push_back(j.type(v));
    }
    TransposeCtx ctx(b, n, operands, operand_unknown, types, cts);
    std::vector<ValueId> in_cts = rule(ctx);
    for (size_t i = 0; i < n.inputs.size(); ++i)
      if (operand_unknown[i]) accumulate(n.inputs[i], in_cts[i], &n);
  }
  return ct;
}

}  // namespace graft::transforms
