#include "transforms/vjp.h"

#include "graft/errors.h"
#include "ir/bgl.h"
#include "ir/builder.h"
#include "transforms/jvp.h"
#include "transforms/rules/transpose_rule.h"

namespace graft::transforms {

using ir::Op;

ir::GraphPtr vjp_graph(const ir::Graph& g, const std::vector<bool>& wrt) {
  ir::GraphPtr jp = jvp_graph(g, wrt);
  const ir::Graph& j = *jp;
  size_t n_in = g.inputs().size(), n_out = g.outputs().size();

  // Partial evaluation: values reached from a tangent input are unknown
  // (linear in the tangents); the rest is the primal computation.
  std::vector<bool> unknown(j.value_id_bound(), false);
  for (size_t i = n_in; i < j.inputs().size(); ++i) unknown[j.inputs()[i]] = true;

  ir::GraphBuilder b;
  std::vector<ValueId> known(j.value_id_bound(), kZero);
  for (size_t i = 0; i < n_in; ++i) known[j.inputs()[i]] = b.input(j.type(j.inputs()[i]));
  std::vector<ValueId> out_cotangents;
  for (size_t k = 0; k < n_out; ++k) out_cotangents.push_back(b.input(j.type(j.outputs()[k])));

  std::vector<size_t> linear_nodes;
  for (size_t idx = 0; idx < j.nodes().size(); ++idx) {
    const ir::Node& n = j.nodes()[idx];
    bool is_unknown = false;
    for (ValueId v : n.inputs) is_unknown = is_unknown || unknown[v];
    if (is_unknown) {
      for (ValueId v : n.outputs) unknown[v] = true;
      linear_nodes.push_back(idx);
      continue;
    }
    std::vector<ValueId> ins;
    for (ValueId v : n.inputs) ins.push_back(known[v]);
    std::vector<ValueId> outs = b.add(n.op, std::move(ins), n.attrs, n.loc, n.scope);
    for (size_t k = 0; k < outs.size(); ++k) known[n.outputs[k]] = outs[k];
  }

  // Transposition: cotangents flow from the tangent outputs back to the
  // tangent inputs, through the linear nodes in reverse.
  std::vector<ValueId> ct(j.value_id_bound(), kZero);
  auto accumulate = [&](ValueId v, ValueId c, const ir::Node* at) {
    if (c == kZero) return;
    if (ct[v] == kZero) {
      ct[v] = c;
      return;
    }
    ct[v] = at ? b.add1(Op::add, {ct[v], c}, {}, at->loc, at->scope) : b.add1(Op::add, {ct[v], c});
  };
  for (size_t k = 0; k < n_out; ++k) {
    ValueId tangent_out = j.outputs()[n_out + k];
    if (unknown[tangent_out]) accumulate(tangent_out, out_cotangents[k], nullptr);
  }
  for (auto it = linear_nodes.rbegin(); it != linear_nodes.rend(); ++it) {
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
      operands.push_back(unknown[v] ? kZero : known[v]);
      operand_unknown.push_back(unknown[v]);
      types.push_back(j.type(v));
    }
    TransposeCtx ctx(b, n, operands, operand_unknown, types, cts);
    std::vector<ValueId> in_cts = rule(ctx);
    for (size_t i = 0; i < n.inputs.size(); ++i)
      if (operand_unknown[i]) accumulate(n.inputs[i], in_cts[i], &n);
  }

  std::vector<ValueId> outputs;
  for (size_t k = 0; k < n_out; ++k) outputs.push_back(known[j.outputs()[k]]);
  for (size_t i = n_in; i < j.inputs().size(); ++i) {
    ValueId t = j.inputs()[i];
    if (ct[t] != kZero) {
      outputs.push_back(ct[t]);
    } else {
      ir::Node anchor;
      TransposeCtx zeros(b, anchor, {}, {}, {}, {});
      outputs.push_back(zeros.zeros(j.type(t)));
    }
  }
  ir::GraphPtr result = b.finish(std::move(outputs));
  return std::make_shared<const ir::Graph>(ir::dead_code_elimination(*result));
}

}  // namespace graft::transforms
