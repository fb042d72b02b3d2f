// Transform rules of custom_jvp_call: its JVP is the user's rule, inlined
// (primals, then tangents, with zeros made concrete). The rule is written
// with graft's ops, so it is differentiable and transposable in turn.
#include "ir/inline.h"
#include "graft/errors.h"
#include "transforms/rules/jvp_rule.h"
#include "transforms/rules/transpose_rule.h"

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

// custom_vjp_call: the forward pass comes from the user's fwd (for its
// residuals); the tangents from a custom_lin node, linear in the tangents,
// whose transpose is the user's bwd.
std::vector<ValueId> custom_vjp_rule(JvpCtx& c) {
  const ir::Graph& fwd = *std::get<ir::Graphs>(*c.attrs().find("fwd")).at(0);
  const ir::GraphPtr& bwd = std::get<ir::Graphs>(*c.attrs().find("bwd")).at(0);
  int64_t nres = std::get<int64_t>(*c.attrs().find("num_residuals"));
  std::vector<ValueId> fwd_outs = c.inline_graph(fwd, c.primals);
  std::vector<ValueId> args(fwd_outs.end() - nres, fwd_outs.end());
  for (size_t i = 0; i < c.primals.size(); ++i) args.push_back(c.instantiate(c.tangents[i], c.primals[i]));
  return c.add_multi(Op::custom_lin, args, {{"bwd", ir::Graphs{bwd}}, {"num_residuals", nres}});
}

}  // namespace

void register_custom_jvp_rules(JvpRuleTable& t) {
  t[static_cast<size_t>(Op::custom_jvp_call)] = custom_jvp_rule;
  t[static_cast<size_t>(Op::custom_vjp_call)] = custom_vjp_rule;
}

// ---- transpose rules
namespace {

// custom_lin's transpose is the user's bwd on (residuals, output cotangents).
std::vector<ValueId> custom_lin_transpose(TransposeCtx& c) {
  const ir::Graph& bwd = *std::get<ir::Graphs>(*c.attrs().find("bwd")).at(0);
  int64_t nres = std::get<int64_t>(*c.attrs().find("num_residuals"));
  for (int64_t i = 0; i < nres; ++i)
    if (c.unknown[i]) throw UnsupportedError("transpose: custom_vjp residuals cannot carry tangents (higher order)");
  std::vector<ValueId> args(c.operands.begin(), c.operands.begin() + nres);
  const std::vector<ir::ValueType> bwd_in = bwd.input_types();
  for (size_t k = 0; k < c.cotangents.size(); ++k)
    args.push_back(c.cotangents[k] == kZero ? c.zeros(bwd_in[nres + k]) : c.cotangents[k]);
  std::vector<ValueId> cts = c.emit().inline_graph(bwd, args);
  std::vector<ValueId> out(nres, kZero);
  out.insert(out.end(), cts.begin(), cts.end());
  return out;
}

}  // namespace

void register_custom_transpose_rules(TransposeRuleTable& t) {
  t[static_cast<size_t>(Op::custom_lin)] = custom_lin_transpose;
}

}  // namespace graft::transforms
