// Shape/dtype rules of calls that carry user rules or a recompute marker.
//
// custom_jvp_call(args..)  call: args -> outs; jvp: (args.., tangents..) ->
//                          (outs.., out tangents..), tangents typed as args.
// custom_vjp_call(args..)  call: args -> outs; fwd: args -> (outs.., residuals..);
//                          bwd: (residuals.., out cotangents..) -> arg cotangents;
//                          attr num_residuals.
// remat(args..)            body: args -> outs, recomputed in the backward pass.
// custom_lin(residuals.., tangents..)  bwd: (residuals.., out cotangents..) ->
//                          tangent-typed cotangents; attr num_residuals; the
//                          outputs are typed as bwd's cotangent inputs.
// linear_call(residuals.., linear..)  fun: operands -> outs; transpose (none,
//                          or one): (residuals.., outs..) -> linear-typed
//                          cotangents; attr num_residuals.
#include "ir/remat_policy.h"
#include "ir/shape_rules/rule.h"

namespace graft::ir {
namespace {

using Types = std::vector<ValueType>;

Types concat(Types a, const Types& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

OutTypes custom_jvp_call_shape(const RuleCtx& c) {
  const Graph& call = c.attr_graph("call");
  c.check_signature(call, "call", c.inputs(), nullptr);
  Types outs = call.output_types();
  Types jvp_out = concat(outs, outs);
  c.check_signature(c.attr_graph("jvp"), "jvp rule", concat(c.inputs(), c.inputs()), &jvp_out);
  return outs;
}

OutTypes custom_vjp_call_shape(const RuleCtx& c) {
  const Graph& call = c.attr_graph("call");
  c.check_signature(call, "call", c.inputs(), nullptr);
  Types outs = call.output_types();
  const Graph& fwd = c.attr_graph("fwd");
  c.check_signature(fwd, "fwd", c.inputs(), nullptr);
  Types fwd_out = fwd.output_types();
  int64_t nres = c.attr_int("num_residuals");
  if (nres < 0 || fwd_out.size() != outs.size() + static_cast<size_t>(nres))
    c.shape_error("fwd must return the call's outputs and then num_residuals residuals");
  if (Types(fwd_out.begin(), fwd_out.begin() + outs.size()) != outs)
    c.shape_error("fwd's leading outputs must have the call's output types");
  Types residuals(fwd_out.begin() + outs.size(), fwd_out.end());
  c.check_signature(c.attr_graph("bwd"), "bwd", concat(residuals, outs), &c.inputs());
  return outs;
}

OutTypes remat_shape(const RuleCtx& c) {
  parse_remat_policy(c.attr_string("policy"));  // a malformed one is refused here, on every path
  const Graph& body = c.attr_graph("body");
  c.check_signature(body, "body", c.inputs(), nullptr);
  return body.output_types();
}

OutTypes custom_lin_shape(const RuleCtx& c) {
  const Graph& bwd = c.attr_graph("bwd");
  int64_t nres = c.attr_int("num_residuals");
  if (nres < 0 || nres > static_cast<int64_t>(c.num_inputs()))
    c.shape_error("num_residuals " + std::to_string(nres) + " is out of range");
  Types residuals(c.inputs().begin(), c.inputs().begin() + nres);
  Types tangents(c.inputs().begin() + nres, c.inputs().end());
  Types bwd_in = bwd.input_types();
  if (bwd_in.size() < residuals.size() || Types(bwd_in.begin(), bwd_in.begin() + nres) != residuals)
    c.shape_error("bwd must take the residuals first");
  Types outs(bwd_in.begin() + nres, bwd_in.end());
  c.check_signature(bwd, "bwd", concat(residuals, outs), &tangents);
  return outs;
}

OutTypes linear_call_shape(const RuleCtx& c) {
  const Graph& fun = c.attr_graph("fun");
  c.check_signature(fun, "fun", c.inputs(), nullptr);
  const int64_t nres = c.attr_int("num_residuals");
  if (nres < 0 || nres > static_cast<int64_t>(c.num_inputs()))
    c.shape_error("num_residuals " + std::to_string(nres) + " is out of range");
  Types outs = fun.output_types();
  const Graphs& transpose = c.attr_graphs("transpose");
  if (transpose.size() > 1) c.shape_error("at most one transpose graph, got " + std::to_string(transpose.size()));
  if (!transpose.empty()) {
    Types residuals(c.inputs().begin(), c.inputs().begin() + nres);
    Types linear(c.inputs().begin() + nres, c.inputs().end());
    c.check_signature(*transpose[0], "transpose", concat(residuals, outs), &linear);
  }
  return outs;
}

}  // namespace graft::ir
