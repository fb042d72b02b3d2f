#include "transforms/jvp.h"

#include "graft/errors.h"
#include "ir/passes.h"
#include "ir/builder.h"
#include "ir/dtype.h"
#include "transforms/rules/jvp_rule.h"

namespace graft::transforms {

using ir::Op;

namespace {

// The index in g's nodes of the node defining v.
int32_t producer_of(const ir::Graph& g, ValueId v) {
  for (size_t i = g.nodes().size(); i-- > 0;)
    for (ValueId o : g.nodes()[i].outputs)
      if (o == v) return static_cast<int32_t>(i);
  return -1;
}

// g without those of the nodes (by index) whose outputs nothing reads.
ir::Graph without_unused(ir::Graph g, const std::vector<int32_t>& nodes) {
  if (nodes.empty()) return g;
  std::vector<bool> read(static_cast<size_t>(g.value_id_bound()), false);
  for (const ir::Node& n : g.nodes())
    for (ValueId v : n.inputs) read[static_cast<size_t>(v)] = true;
  for (ValueId v : g.outputs()) read[static_cast<size_t>(v)] = true;
  std::vector<bool> keep(g.nodes().size(), true);
  for (int32_t i : nodes) {
    if (i < 0) continue;
    bool used = false;
    for (ValueId v : g.nodes()[static_cast<size_t>(i)].outputs) used = used || read[static_cast<size_t>(v)];
    keep[static_cast<size_t>(i)] = used;
  }
  g.keep_nodes(keep);
  return g;
}

}  // namespace

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

  // Nodes whose primal outputs a rule computed anew: dead, but one with
  // effects would survive dead-code elimination and run twice.
  std::vector<int32_t> superseded;
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
    bool replaced = false;
    for (size_t k = 0; k < outs.size(); ++k) {
      replaced = replaced || ctx.outputs[k] != outs[k];
      primal[n.outputs[k]] = ctx.outputs[k];
    }
    if (replaced) superseded.push_back(producer_of(b.graph(), outs[0]));
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
  return std::make_shared<const ir::Graph>(
      ir::dead_code_elimination(without_unused(b.finish_graph(std::move(outputs)), superseded)));
}

}  // namespace graft::transforms
