// Transform rules of custom_jvp_call: its JVP is the user's rule, inlined
// (primals, then tangents, with zeros made concrete). The rule is written
// with graft's ops, so it is differentiable and transposable in turn.
#include "ir/inline.h"
#include "graft/errors.h"
#include "ir/bgl.h"
#include "ir/dtype.h"
#include "transforms/jvp.h"
#include "transforms/partial_eval.h"
#include "transforms/transpose.h"
#include "transforms/rules/batch_rule.h"
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

// remat (checkpoint): the primal node stays as it is; the tangents come from
// a second remat whose body is the body's JVP restricted to its tangents.
// That body is linear in the tangents, and its transpose (below) recomputes
// the body's primal values inside the backward pass instead of saving them.
std::vector<ValueId> remat_rule(JvpCtx& c) {
  const ir::Graph& body = *std::get<ir::Graphs>(*c.attrs().find("body")).at(0);
  std::vector<bool> has_tangent;
  std::vector<ValueId> args = c.primals;
  for (size_t i = 0; i < c.primals.size(); ++i) {
    bool is_float = ir::is_floating(c.type(c.primals[i]).dtype);
    has_tangent.push_back(is_float);
    if (is_float) args.push_back(c.instantiate(c.tangents[i], c.primals[i]));
  }
  ir::GraphPtr full = jvp_graph(body, has_tangent);
  ir::Graph tangent_body = *full;
  size_t n_out = body.outputs().size();
  tangent_body.set_outputs(std::vector<ValueId>(full->outputs().begin() + static_cast<long>(n_out), full->outputs().end()));
  auto pruned = std::make_shared<const ir::Graph>(ir::dead_code_elimination(tangent_body));
  return c.add_multi(Op::remat, args, {{"body", ir::Graphs{pruned}}});
}

// custom_lin exists only between a JVP and its transpose. Differentiating it
// again in forward mode would need the JVP of the user's bwd with respect to
// the residuals, which a custom_vjp does not define; JAX refuses it too.
std::vector<ValueId> custom_lin_rule(JvpCtx&) {
  throw UnsupportedError(
      "custom_lin: forward-mode differentiation of a custom_vjp function's tangent is not defined (its rule is a "
      "VJP); use reverse mode (grad, vjp, jacrev) over it, or custom_jvp");
}

}  // namespace

void register_custom_jvp_rules(JvpRuleTable& t) {
  t[static_cast<size_t>(Op::custom_lin)] = custom_lin_rule;
  t[static_cast<size_t>(Op::remat)] = remat_rule;
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

// The transpose of a tangent remat: its body's primal part is recomputed
// here, in the backward pass, then its linear part is transposed.
std::vector<ValueId> remat_transpose(TransposeCtx& c) {
  const ir::Graph& body = *std::get<ir::Graphs>(*c.attrs().find("body")).at(0);
  size_t n_primal = 0;
  while (n_primal < c.unknown.size() && !c.unknown[n_primal]) ++n_primal;
  for (size_t i = n_primal; i < c.unknown.size(); ++i)
    if (!c.unknown[i]) throw UnsupportedError("transpose: remat operands must be primals then tangents");
  std::vector<ValueId> primals(c.operands.begin(), c.operands.begin() + static_cast<long>(n_primal));
  ir::GraphBuilder& b = c.emit().builder();
  PartialEval pe = partial_eval(body, b, primals);
  std::vector<std::pair<ValueId, ValueId>> seeds;
  for (size_t k = 0; k < body.outputs().size(); ++k)
    if (c.cotangents[k] != kZero) seeds.emplace_back(body.outputs()[k], c.cotangents[k]);
  std::vector<ValueId> ct = transpose_linear(body, pe, b, seeds);
  std::vector<ValueId> out(n_primal, kZero);
  for (size_t i = n_primal; i < body.inputs().size(); ++i) out.push_back(ct[body.inputs()[i]]);
  return out;
}

}  // namespace

void register_custom_transpose_rules(TransposeRuleTable& t) {
  t[static_cast<size_t>(Op::remat)] = remat_transpose;
  t[static_cast<size_t>(Op::custom_lin)] = custom_lin_transpose;
}

// ---- batching rules (vmap)

void register_custom_batch_rules(BatchRuleTable&) {}

}  // namespace graft::transforms
