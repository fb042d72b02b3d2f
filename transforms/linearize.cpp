#include "transforms/linearize.h"

#include "ir/passes.h"
#include "transforms/jvp.h"
#include "transforms/partial_eval.h"
#include "transforms/rules/jvp_rule.h"

namespace graft::transforms {

Linearized linearize_graph(const ir::Graph& g, const std::vector<bool>& has_tangent) {
  ir::GraphPtr jp = jvp_graph(g, has_tangent);
  const ir::Graph& j = *jp;
  const size_t n_in = g.inputs().size(), n_out = g.outputs().size();

  ir::GraphBuilder fb;
  std::vector<ValueId> primals;
  for (size_t i = 0; i < n_in; ++i) primals.push_back(fb.input(j.type(j.inputs()[i])));
  PartialEval pe = partial_eval(j, fb, primals);

  // Residuals: known values the linear nodes read, and known output tangents
  // (a tangent that does not depend on the inputs' tangents, e.g. zeros).
  std::vector<ValueId> residuals;              // values of the JVP graph
  std::vector<int64_t> slot(j.value_id_bound(), -1);
  auto keep = [&](ValueId v) {
    if (pe.unknown[v] || slot[v] >= 0) return;
    slot[v] = static_cast<int64_t>(residuals.size());
    residuals.push_back(v);
  };
  for (size_t idx : pe.linear_nodes)
    for (ValueId v : j.nodes()[idx].inputs) keep(v);
  for (size_t k = 0; k < n_out; ++k) keep(j.outputs()[n_out + k]);

  std::vector<ValueId> fwd_outs;
  for (size_t k = 0; k < n_out; ++k) fwd_outs.push_back(pe.known[j.outputs()[k]]);
  for (ValueId r : residuals) fwd_outs.push_back(pe.known[r]);
  ir::GraphPtr fwd = fb.finish(std::move(fwd_outs));

  ir::GraphBuilder lb;
  std::vector<ValueId> map(j.value_id_bound(), -1);
  for (ValueId r : residuals) map[r] = lb.input(j.type(r));
  for (size_t i = n_in; i < j.inputs().size(); ++i) map[j.inputs()[i]] = lb.input(j.type(j.inputs()[i]));
  for (size_t idx : pe.linear_nodes) {
    const ir::Node& n = j.nodes()[idx];
    ir::IdList ins;
    for (ValueId v : n.inputs) ins.push_back(map[v]);
    ir::IdList outs = lb.add(n.op, std::move(ins), n.attrs, n.loc, n.scope);
    for (size_t k = 0; k < outs.size(); ++k) map[n.outputs[k]] = outs[k];
  }
  std::vector<ValueId> lin_outs;
  for (size_t k = 0; k < n_out; ++k) lin_outs.push_back(map[j.outputs()[n_out + k]]);
  ir::GraphPtr lin = lb.finish(std::move(lin_outs));

  Linearized result;
  result.primal = std::make_shared<const ir::Graph>(ir::dead_code_elimination(*fwd));
  result.linear = lin;
  result.num_residuals = residuals.size();
  return result;
}

}  // namespace graft::transforms
