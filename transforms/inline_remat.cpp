#include "transforms/inline_remat.h"

#include <vector>

#include "ir/attr_access.h"
#include "ir/builder.h"

namespace graft::transforms {

using ir::Op;

namespace {

bool holds_remat(const ir::Graph& g) {
  for (const ir::Node& n : g.nodes())
    if (n.op == Op::remat || n.op == Op::checkpoint_name) return true;
  return false;
}

// Copies g's nodes into b with g's inputs bound to `inputs`; returns g's outputs there.
std::vector<ValueId> copy_inlining(ir::GraphBuilder& b, const ir::Graph& g, const std::vector<ValueId>& inputs) {
  std::vector<ValueId> map(g.value_id_bound(), -1);
  for (size_t i = 0; i < inputs.size(); ++i) map[g.inputs()[i]] = inputs[i];
  for (const ir::Node& n : g.nodes()) {
    std::vector<ValueId> in;
    in.reserve(n.inputs.size());
    for (ValueId v : n.inputs) in.push_back(map[v]);
    if (n.op == Op::checkpoint_name) {
      map[n.outputs[0]] = in[0];
      continue;
    }
    std::vector<ValueId> out;
    if (n.op == Op::remat) {
      out = copy_inlining(b, *ir::attr<ir::Graphs>(n, "body").at(0), in);
    } else {
      ir::IdList made = b.add(n.op, ir::IdList(in), n.attrs, n.loc, n.scope);
      out.assign(made.begin(), made.end());
    }
    for (size_t k = 0; k < out.size(); ++k) map[n.outputs[k]] = out[k];
  }
  std::vector<ValueId> outs;
  for (ValueId v : g.outputs()) outs.push_back(map[v]);
  return outs;
}

}  // namespace

ir::GraphPtr inline_remat(const ir::GraphPtr& g) {
  if (!holds_remat(*g)) return g;
  ir::GraphBuilder b(ir::GraphBuilder::Sharing::none);
  b.reserve(g->nodes().size());
  std::vector<ValueId> inputs;
  for (ValueId v : g->inputs()) inputs.push_back(b.input(g->type(v)));
  std::vector<ValueId> outs = copy_inlining(b, *g, inputs);
  ir::Graph out = b.finish_graph(std::move(outs));
  out.set_names(g->input_names(), g->output_names());
  return std::make_shared<const ir::Graph>(std::move(out));
}

}  // namespace graft::transforms
