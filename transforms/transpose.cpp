#include "transforms/transpose.h"

#include "graft/errors.h"
#include "ir/passes.h"
#include "ir/inline.h"
#include "transforms/partial_eval.h"
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
    ct[v] = at ? b.add1(ir::Op::add, {ct[v], c}, {}, at->loc, backward_scope(at->scope))
               : b.add1(ir::Op::add, {ct[v], c}, {}, {}, backward_scope(""));
  };
  for (const auto& [value, cotangent] : seeds)
    if (pe.unknown[value]) accumulate(value, cotangent, nullptr);

  for (auto it = pe.linear_nodes.rbegin(); it != pe.linear_nodes.rend(); ++it) {
    const ir::Node& n = j.nodes()[*it];
    ir::IdList cts;
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
    ir::IdList operands;
    std::vector<bool> operand_unknown;
    std::vector<ir::ValueType> types;
    for (ValueId v : n.inputs) {
      operands.push_back(pe.unknown[v] ? kZero : pe.known[v]);
      operand_unknown.push_back(pe.unknown[v]);
      types.push_back(j.type(v));
    }
    TransposeCtx ctx(b, n, std::move(operands), std::move(operand_unknown), std::move(types), std::move(cts));
    ir::IdList in_cts = rule(ctx);
    for (size_t i = 0; i < n.inputs.size(); ++i)
      if (ctx.unknown[i]) accumulate(n.inputs[i], in_cts[i], &n);
  }
  return ct;
}

ir::GraphPtr transpose_graph(const ir::Graph& g, const std::vector<bool>& unknown) {
  const size_t n_in = g.inputs().size();
  // Known inputs first: partial evaluation takes the primals as a prefix.
  std::vector<size_t> order;
  for (size_t i = 0; i < n_in; ++i)
    if (!unknown[i]) order.push_back(i);
  const size_t n_known = order.size();
  for (size_t i = 0; i < n_in; ++i)
    if (unknown[i]) order.push_back(i);
  std::vector<ir::ValueType> types;
  std::vector<size_t> bind(n_in);
  for (size_t pos = 0; pos < n_in; ++pos) {
    types.push_back(g.type(g.inputs()[order[pos]]));
    bind[order[pos]] = pos;
  }
  std::vector<size_t> all_outputs(g.outputs().size());
  for (size_t k = 0; k < all_outputs.size(); ++k) all_outputs[k] = k;
  ir::GraphPtr sorted = ir::rebind_graph(g, types, bind, all_outputs);

  ir::GraphBuilder b;
  b.reserve(sorted->nodes().size());
  std::vector<ValueId> known;
  for (size_t pos = 0; pos < n_known; ++pos) known.push_back(b.input(types[pos]));
  std::vector<std::pair<ValueId, ValueId>> seeds;
  for (ValueId out : sorted->outputs()) {
    const ir::ValueType t = sorted->type(out);
    seeds.emplace_back(out, b.input(t));
  }
  PartialEval pe = partial_eval(*sorted, b, known);
  std::vector<ValueId> ct = transpose_linear(*sorted, pe, b, seeds);
  std::vector<ValueId> outputs;
  for (size_t pos = n_known; pos < n_in; ++pos) {
    ValueId v = sorted->inputs()[pos];
    outputs.push_back(ct[v] != kZero ? ct[v] : emit_full(b, 0.0, types[pos]));
  }
  return std::make_shared<const ir::Graph>(ir::dead_code_elimination(b.finish_graph(std::move(outputs))));
}

}  // namespace graft::transforms
