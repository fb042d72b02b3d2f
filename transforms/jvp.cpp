#include "transforms/jvp.h"

#include "graft/errors.h"
#include "ir/passes.h"
#include "ir/builder.h"
#include "ir/dtype.h"
#include "transforms/rules/jvp_rule.h"

namespace graft::transforms {

using ir::Op;

ir::GraphPtr jvp_graph(const ir::Graph& g, const std::vector<bool>& has_tangent) {
  if (has_tangent.size() != g.inputs().size())
    throw Error("jvp: " + std::to_string(has_tangent.size()) + " tangent flags for " +
                std::to_string(g.inputs().size()) + " inputs");
  ir::GraphBuilder b;
  b.reserve(3 * g.nodes().size());  // a primal and about two tangent nodes per node
  std::vector<ValueId> primal(g.value_id_bound(), kZero), tangent(g.value_id_bound(), kZero);
  for (ValueId v : g.inputs()) primal[v] = b.input(g.type(v));
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    if (!has_tangent[i]) continue;
    const ir::ValueType& t = g.type(g.inputs()[i]);
    if (!ir::is_inexact(t.dtype))
      throw DTypeError("jvp: input " + std::to_string(i) + " is " + ir::type_str(t) +
                       "; only float and complex inputs can be differentiated");
    tangent[g.inputs()[i]] = b.input(t);
  }

  for (const ir::Node& n : g.nodes()) {
    ir::IdList ins, tins;
    bool any_tangent = false;
    for (ValueId v : n.inputs) {
      ins.push_back(primal[v]);
      tins.push_back(tangent[v]);
      any_tangent = any_tangent || tangent[v] != kZero;
    }
    ir::IdList outs = b.add(n.op, ins, n.attrs, n.loc, n.scope);
    for (size_t k = 0; k < outs.size(); ++k) primal[n.outputs[k]] = outs[k];

    bool float_out = false;
    for (ValueId v : outs) float_out = float_out || ir::is_inexact(b.type(v).dtype);
    if (!any_tangent || !float_out || is_non_differentiable(n.op)) continue;
    JvpRule rule = jvp_rule(n.op);
    if (!rule)
      throw UnsupportedError("jvp: " + std::string(ir::op_name(n.op)) + " has no JVP rule yet" +
                             (n.loc.empty() ? "" : " (at " + ir::loc_str(n.loc) + ")"));
    JvpCtx ctx(b, n, ins, tins, outs);
    ir::IdList touts;
    try {
      touts = rule(ctx);
    } catch (const UnsupportedError& e) {
      // A rule that refuses names the op; the user needs the line too (the innermost one wins).
      std::string what = e.what();
      if (n.loc.empty() || what.find(" (at ") != std::string::npos) throw;
      throw UnsupportedError(what + " (at " + ir::loc_str(n.loc) + ")");
    }
    for (size_t k = 0; k < touts.size(); ++k) tangent[n.outputs[k]] = touts[k];
    // A rule may compute the primal outputs anew beside the tangents (loops
    // do, so as to run once); the node emitted above then dies.
    for (size_t k = 0; k < outs.size(); ++k) primal[n.outputs[k]] = ctx.outputs[k];
  }

  std::vector<ValueId> outputs;
  for (ValueId v : g.outputs()) outputs.push_back(primal[v]);
  for (ValueId v : g.outputs()) {
    if (tangent[v] != kZero) {
      outputs.push_back(tangent[v]);
      continue;
    }
    // A zero tangent leaves as an array of zeros (the caller needs a value).
    const ir::ValueType t = b.type(primal[v]);
    outputs.push_back(emit_full(b, 0.0, t));
  }
  return std::make_shared<const ir::Graph>(ir::dead_code_elimination(b.finish_graph(std::move(outputs))));
}

}  // namespace graft::transforms
