#include "transforms/partial_eval.h"

#include "transforms/rules/while_reverse.h"

namespace graft::transforms {

PartialEval partial_eval(const ir::Graph& jvp, ir::GraphBuilder& b, const std::vector<ValueId>& primal_inputs) {
  PartialEval pe;
  pe.unknown.assign(jvp.value_id_bound(), false);
  pe.known.assign(jvp.value_id_bound(), kZero);
  for (size_t i = 0; i < primal_inputs.size(); ++i) pe.known[jvp.inputs()[i]] = primal_inputs[i];
  for (size_t i = primal_inputs.size(); i < jvp.inputs().size(); ++i) pe.unknown[jvp.inputs()[i]] = true;
  for (size_t idx = 0; idx < jvp.nodes().size(); ++idx) {
    const ir::Node& n = jvp.nodes()[idx];
    bool is_unknown = false;
    for (ValueId v : n.inputs) is_unknown = is_unknown || pe.unknown[v];
    if (is_unknown) {
      pe.linear_nodes.push_back(idx);
      // A while loop carrying primal and tangent values (its JVP): the primal
      // part runs now, as a loop of its own; only the tangent carries stay unknown.
      std::vector<bool> operand_unknown;
      for (ValueId v : n.inputs) operand_unknown.push_back(pe.unknown[v]);
      if (auto split = split_while(n, operand_unknown)) {
        std::vector<ValueId> operands;
        for (ValueId v : n.inputs) operands.push_back(pe.unknown[v] ? kZero : pe.known[v]);
        std::vector<ValueId> known = emit_known_while(b, n, *split, operands);
        size_t next = 0;
        for (size_t k = 0; k < split->carries; ++k) {
          if (split->carry_known[k])
            pe.known[n.outputs[k]] = known[next++];
          else
            pe.unknown[n.outputs[k]] = true;
        }
        continue;
      }
      for (ValueId v : n.outputs) pe.unknown[v] = true;
      continue;
    }
    ir::IdList ins;
    for (ValueId v : n.inputs) ins.push_back(pe.known[v]);
    ir::IdList outs = b.add(n.op, std::move(ins), n.attrs, n.loc, n.scope);
    for (size_t k = 0; k < outs.size(); ++k) pe.known[n.outputs[k]] = outs[k];
  }
  return pe;
}

}  // namespace graft::transforms
