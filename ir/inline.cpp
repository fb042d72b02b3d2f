#include "ir/inline.h"

#include "graft/errors.h"

namespace graft::ir {

std::vector<ValueId> inline_graph(GraphBuilder& b, const Graph& g, const std::vector<ValueId>& inputs) {
  if (inputs.size() != g.inputs().size())
    throw Error("inline_graph: the graph takes " + std::to_string(g.inputs().size()) + " inputs, got " +
                std::to_string(inputs.size()));
  std::vector<ValueId> map(g.value_id_bound(), -1);
  for (size_t i = 0; i < inputs.size(); ++i) map[g.inputs()[i]] = inputs[i];
  for (const Node& n : g.nodes()) {
    IdList in;
    in.reserve(n.inputs.size());
    for (ValueId v : n.inputs) in.push_back(map[v]);
    IdList out = b.add(n.op, std::move(in), n.attrs, n.loc, n.scope);
    for (size_t k = 0; k < out.size(); ++k) map[n.outputs[k]] = out[k];
  }
  std::vector<ValueId> outs;
  for (ValueId v : g.outputs()) outs.push_back(map[v]);
  return outs;
}

GraphPtr rebind_graph(const Graph& g, const std::vector<ValueType>& input_types, const std::vector<size_t>& bind,
                      const std::vector<size_t>& outputs) {
  GraphBuilder b;
  std::vector<ValueId> ins;
  for (const ValueType& t : input_types) ins.push_back(b.input(t));
  if (bind.size() != g.inputs().size()) throw Error("rebind_graph: one binding per input of the graph is needed");
  std::vector<ValueId> bound;
  for (size_t i : bind) bound.push_back(ins.at(i));
  std::vector<ValueId> outs = inline_graph(b, g, bound);
  std::vector<ValueId> picked;
  for (size_t k : outputs) picked.push_back(k < outs.size() ? outs[k] : ins.at(k - outs.size()));
  return b.finish(std::move(picked));
}

}  // namespace graft::ir
