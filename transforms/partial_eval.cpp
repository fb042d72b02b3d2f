#include "transforms/partial_eval.h"

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
      for (ValueId v : n.outputs) pe.unknown[v] = true;
      pe.linear_nodes.push_back(idx);
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
