// Transform rules of custom_jvp_call: its JVP is the user's rule, inlined
// (primals, then tangents, with zeros made concrete). The rule is written
// with graft's ops, so it is differentiable and transposable in turn.
#include "ir/inline.h"
#include "transforms/rules/jvp_rule.h"

namespace graft::transforms {
namespace {

using ir::Op;

std::vector<ValueId> custom_jvp_rule(JvpCtx& c) {
  const ir::Graph& rule = *std::get<ir::Graphs>(*c.attrs().find("jvp")).at(0);
  std::vector<ValueId> args = c.primals;
  for (size_t i = 0; i < c.primals.size(); ++i) args.push_back(c.instantiate(c.tangents[i], c.primals[i]));
  std::vector<ValueId> outs = c.inline_graph(rule, args);
  // The rule returns (outputs, output tangents); the node's outputs stand for the first half.
  return std::vector<ValueId>(outs.begin() + static_cast<long>(outs.size() / 2), outs.end());
}

}  // namespace

void register_custom_jvp_rules(JvpRuleTable& t) { t[static_cast<size_t>(Op::custom_jvp_call)] = custom_jvp_rule; }

}  // namespace graft::transforms
