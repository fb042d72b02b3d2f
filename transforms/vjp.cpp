#include "transforms/vjp.h"

#include <set>

#include "ir/passes.h"
#include "transforms/jvp.h"
#include "transforms/partial_eval.h"
#include "transforms/rules/transpose_rule.h"
#include "transforms/transpose.h"

namespace graft::transforms {

ir::GraphPtr vjp_graph(const ir::Graph& g, const std::vector<bool>& wrt) {
  ir::GraphPtr jp = jvp_graph(g, wrt);
  const ir::Graph& j = *jp;
  size_t n_in = g.inputs().size(), n_out = g.outputs().size();

  ir::GraphBuilder b;
  std::vector<ValueId> primals;
  for (size_t i = 0; i < n_in; ++i) primals.push_back(b.input(j.type(j.inputs()[i])));
  std::vector<ValueId> out_cotangents;
  for (size_t k = 0; k < n_out; ++k) out_cotangents.push_back(b.input(j.type(j.outputs()[k])));

  PartialEval pe = partial_eval(j, b, primals);
  std::vector<std::pair<ValueId, ValueId>> seeds;  // each output's tangent receives its cotangent
  for (size_t k = 0; k < n_out; ++k) seeds.emplace_back(j.outputs()[n_out + k], out_cotangents[k]);
  std::vector<ValueId> ct = transpose_linear(j, pe, b, seeds);

  std::vector<ValueId> outputs;
  for (size_t k = 0; k < n_out; ++k) outputs.push_back(pe.known[j.outputs()[k]]);
  for (size_t i = n_in; i < j.inputs().size(); ++i) {
    ValueId t = j.inputs()[i];
    if (ct[t] != kZero) {
      outputs.push_back(ct[t]);
    } else {
      outputs.push_back(emit_full(b, 0.0, j.type(t)));
    }
  }
  return std::make_shared<const ir::Graph>(ir::dead_code_elimination(b.finish_graph(std::move(outputs))));
}

size_t count_residuals(const ir::Graph& g, const std::vector<bool>& wrt) {
  ir::GraphPtr jp = jvp_graph(g, wrt);
  ir::GraphBuilder b;
  std::vector<ValueId> primals;
  for (size_t i = 0; i < g.inputs().size(); ++i) primals.push_back(b.input(jp->type(jp->inputs()[i])));
  PartialEval pe = partial_eval(*jp, b, primals);
  std::set<ValueId> read;
  for (size_t idx : pe.linear_nodes)
    for (ValueId v : jp->nodes()[idx].inputs)
      if (!pe.unknown[v]) read.insert(pe.known[v]);
  return read.size();
}

}  // namespace graft::transforms
