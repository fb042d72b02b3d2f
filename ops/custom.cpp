// The custom op family: each op's shape/dtype rule, JVP, transpose and
// batching rule side by side, op by op in ops.def order (the rules an op
// takes from ops.def's standard columns are not repeated here).
//
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
//
// Transform rules of custom_jvp_call: its JVP is the user's rule, inlined
// (primals, then tangents, with zeros made concrete). The rule is written
// with graft's ops, so it is differentiable and transposable in turn.
//
// Batching rules (vmap)
//
// As JAX does, every subgraph is batched consistently with the operands and
// every output comes out at dimension 0, so the batched node keeps the
// signatures its shape rule checks:
//   custom_jvp_call, remat: operands keep their batch dims (or none); "call"
//     and the "jvp" rule (primals, tangents typed alike) are batched with
//     those dims. A tangent has its primal's type, so tangents take the same dims.
//   custom_vjp_call: bwd returns one cotangent per operand, typed as the
//     operand, and its batched version returns them all at 0; so every operand
//     is moved (or broadcast) to dimension 0 and call, fwd (whose residuals
//     come out at 0) and bwd are batched with all inputs at 0. An unbatched
//     operand's cotangent is then per example, and summed by the broadcast's
//     transpose.
//   custom_lin(residuals.., tangents..): residuals keep their dims; tangents
//     move to 0, as bwd's batched cotangents come out there.
#include <algorithm>

#include "graft/errors.h"
#include "ir/attr_access.h"
#include "ir/dtype.h"
#include "ir/inline.h"
#include "ir/passes.h"
#include "ir/remat_policy.h"
#include "ops/rules.h"
#include "transforms/jvp.h"
#include "transforms/partial_eval.h"
#include "transforms/transpose.h"

namespace graft::ops {

namespace {

using Types = std::vector<ValueType>;

Types concat(Types a, const Types& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// remat (checkpoint): the tangents come from a second remat whose body is
// the body's JVP restricted to its tangents. That body is linear in the
// tangents, and its transpose (below) recomputes the body's primal values
// inside the backward pass instead of saving them; the values the node's
// policy saves (ir/remat_policy.h) it reads instead, as extra operands that
// the primal remat returns beside its outputs. Only those the tangents need
// are kept: with everything_saveable that is what no checkpoint would save.
// `full` with the primal values `saved` read from new inputs placed after
// its first `num_primals` inputs; returns the values `outputs`. Nodes only
// the replaced values needed are left for recomputation_dce.
ir::Graph reading_saved(const ir::Graph& full, size_t num_primals, const std::vector<ValueId>& saved,
                        const std::vector<ValueId>& outputs) {
  ir::GraphBuilder b;
  std::vector<ValueId> map(full.value_id_bound(), -1);
  std::vector<ValueId> replacement(full.value_id_bound(), -1);
  for (size_t i = 0; i < num_primals; ++i) map[full.inputs()[i]] = b.input(full.type(full.inputs()[i]));
  for (ValueId v : saved) replacement[v] = b.input(full.type(v));
  for (size_t i = num_primals; i < full.inputs().size(); ++i)
    map[full.inputs()[i]] = b.input(full.type(full.inputs()[i]));
  for (ValueId v : full.inputs())
    if (replacement[v] >= 0) map[v] = replacement[v];
  for (const ir::Node& n : full.nodes()) {
    ir::IdList ins;
    for (ValueId v : n.inputs) ins.push_back(map[v]);
    ir::IdList outs = b.add(n.op, std::move(ins), n.attrs, n.loc, n.scope);
    for (size_t k = 0; k < outs.size(); ++k)
      map[n.outputs[k]] = replacement[n.outputs[k]] >= 0 ? replacement[n.outputs[k]] : outs[k];
  }
  std::vector<ValueId> outs;
  for (ValueId v : outputs) outs.push_back(map[v]);
  return ir::recomputation_dce(b.finish_graph(std::move(outs)));
}

using Batched = std::vector<BatchedValue>;

const ir::GraphPtr& graph_attr(const ir::Node& node, const char* name) {
  return ir::attr<ir::Graphs>(node, name).at(0);
}

std::vector<int64_t> operand_dims(const BatchCtx& c) {
  std::vector<int64_t> d;
  for (const BatchedValue& o : c.operands) d.push_back(o.dim);
  return d;
}

std::vector<ValueId> operand_values(const BatchCtx& c) {
  std::vector<ValueId> v;
  for (const BatchedValue& o : c.operands) v.push_back(o.value);
  return v;
}

}  // namespace

// ---- custom_jvp_call

OutTypes custom_jvp_call_shape(const RuleCtx& c) {
  const Graph& call = c.attr_graph("call");
  c.check_signature(call, "call", c.inputs(), nullptr);
  Types outs = call.output_types();
  Types jvp_out = concat(outs, outs);
  c.check_signature(c.attr_graph("jvp"), "jvp rule", concat(c.inputs(), c.inputs()), &jvp_out);
  return outs;
}

ir::IdList custom_jvp_call_jvp(JvpCtx& c) {
  const ir::Graph& rule = *ir::attr<ir::Graphs>(c.node(), "jvp").at(0);
  std::vector<ValueId> args = c.primals;
  for (size_t i = 0; i < c.primals.size(); ++i) args.push_back(c.instantiate(c.tangents[i], c.primals[i]));
  std::vector<ValueId> outs = c.inline_graph(rule, args);
  // The rule returns (outputs, output tangents); the node's outputs stand for the first half.
  return std::vector<ValueId>(outs.begin() + static_cast<long>(outs.size() / 2), outs.end());
}

std::vector<BatchedValue> custom_jvp_call_batch(BatchCtx& c) {
  const std::vector<int64_t> dims = operand_dims(c);
  std::vector<int64_t> jvp_dims = dims;
  jvp_dims.insert(jvp_dims.end(), dims.begin(), dims.end());
  ir::Attrs attrs = c.attrs();
  attrs.set("call", ir::Graphs{batch_subgraph(*graph_attr(c.node(), "call"), dims, c.axis_size, c.axis_name)});
  attrs.set("jvp", ir::Graphs{batch_subgraph(*graph_attr(c.node(), "jvp"), jvp_dims, c.axis_size, c.axis_name)});
  return at_zero(c.add_multi(Op::custom_jvp_call, operand_values(c), attrs));
}

// ---- custom_vjp_call

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

// custom_vjp_call: the forward pass comes from the user's fwd (for its
// residuals); the tangents from a custom_lin node, linear in the tangents,
// whose transpose is the user's bwd.
ir::IdList custom_vjp_call_jvp(JvpCtx& c) {
  const ir::Graph& fwd = *ir::attr<ir::Graphs>(c.node(), "fwd").at(0);
  const ir::GraphPtr& bwd = ir::attr<ir::Graphs>(c.node(), "bwd").at(0);
  int64_t nres = ir::attr<int64_t>(c.node(), "num_residuals");
  std::vector<ValueId> fwd_outs = c.inline_graph(fwd, c.primals);
  // fwd's outputs stand for the call's too (as JAX's): the call itself is
  // then dead, so a function the user gave (a host callback) runs once, not twice.
  for (size_t k = 0; k < c.outputs.size(); ++k) c.outputs[k] = fwd_outs[k];
  std::vector<ValueId> args(fwd_outs.end() - nres, fwd_outs.end());
  for (size_t i = 0; i < c.primals.size(); ++i) args.push_back(c.instantiate(c.tangents[i], c.primals[i]));
  return c.add_multi(Op::custom_lin, args, {{"bwd", ir::Graphs{bwd}}, {"num_residuals", nres}});
}

std::vector<BatchedValue> custom_vjp_call_batch(BatchCtx& c) {
  std::vector<ValueId> args;
  for (size_t i = 0; i < c.operands.size(); ++i) args.push_back(c.at(i, 0));
  const std::vector<int64_t> zeros(c.operands.size(), 0);
  ir::Attrs attrs = c.attrs();
  const ir::Graph& bwd = *graph_attr(c.node(), "bwd");
  const std::vector<int64_t> bwd_dims(bwd.inputs().size(), 0);  // residuals, then output cotangents
  attrs.set("call", ir::Graphs{batch_subgraph(*graph_attr(c.node(), "call"), zeros, c.axis_size, c.axis_name)});
  attrs.set("fwd", ir::Graphs{batch_subgraph(*graph_attr(c.node(), "fwd"), zeros, c.axis_size, c.axis_name)});
  attrs.set("bwd", ir::Graphs{batch_subgraph(bwd, bwd_dims, c.axis_size, c.axis_name)});
  return at_zero(c.add_multi(Op::custom_vjp_call, args, attrs));
}

// ---- remat

OutTypes remat_shape(const RuleCtx& c) {
  parse_remat_policy(c.attr_string("policy"));  // a malformed one is refused here, on every path
  const Graph& body = c.attr_graph("body");
  c.check_signature(body, "body", c.inputs(), nullptr);
  return body.output_types();
}

ir::IdList remat_jvp(JvpCtx& c) {
  const ir::GraphPtr& body = ir::attr<ir::Graphs>(c.node(), "body").at(0);
  const std::string& policy_text = ir::attr<std::string>(c.node(), "policy");
  const ir::RematPolicy policy = ir::parse_remat_policy(policy_text);
  const size_t n_in = body->inputs().size(), n_out = body->outputs().size();

  // The values the policy may save: outputs of the body's nodes it names, as
  // extra outputs of the body, so that the JVP graph says where they are.
  std::vector<ValueId> saveable;
  if (policy.save != ir::RematSave::nothing)
    for (const ir::Node& n : body->nodes())
      if (ir::remat_saveable(policy, n))
        for (ValueId v : n.outputs) saveable.push_back(v);
  ir::Graph extended = *body;
  std::vector<ValueId> ext_outputs = body->outputs();
  ext_outputs.insert(ext_outputs.end(), saveable.begin(), saveable.end());
  extended.set_outputs(ext_outputs);

  std::vector<bool> has_tangent;
  std::vector<ValueId> tangent_args;
  for (size_t i = 0; i < c.primals.size(); ++i) {
    bool is_float = ir::is_inexact(c.type(c.primals[i]).dtype);
    has_tangent.push_back(is_float);
    if (is_float) tangent_args.push_back(c.instantiate(c.tangents[i], c.primals[i]));
  }
  ir::GraphPtr full = jvp_graph(extended, has_tangent);
  // full: (primals, tangents) -> (outputs, saveable values, their tangents).
  const std::vector<ValueId>& fo = full->outputs();
  std::vector<ValueId> saved_in_full(fo.begin() + static_cast<long>(n_out),
                                     fo.begin() + static_cast<long>(n_out + saveable.size()));
  const std::vector<ValueId> tangent_outs(fo.begin() + static_cast<long>(n_out + saveable.size()),
                                          fo.begin() + static_cast<long>(2 * n_out + saveable.size()));

  // Keep the saveable values the tangents read; the rest are recomputed (if needed at all).
  ir::Graph tangent_body = reading_saved(*full, n_in, saved_in_full, tangent_outs);
  std::vector<bool> read(static_cast<size_t>(tangent_body.value_id_bound()), false);
  for (const ir::Node& n : tangent_body.nodes())
    for (ValueId v : n.inputs) read[static_cast<size_t>(v)] = true;
  for (ValueId v : tangent_body.outputs()) read[static_cast<size_t>(v)] = true;
  std::vector<ValueId> kept_in_full, kept_in_body;
  for (size_t k = 0; k < saveable.size(); ++k)
    if (read[static_cast<size_t>(tangent_body.inputs()[n_in + k])]) {
      // Two saveable entries can be one value of the JVP graph (CSE); keep it once.
      if (std::find(kept_in_full.begin(), kept_in_full.end(), saved_in_full[k]) != kept_in_full.end()) continue;
      kept_in_full.push_back(saved_in_full[k]);
      kept_in_body.push_back(saveable[k]);
    }
  if (kept_in_full.size() != saveable.size()) tangent_body = reading_saved(*full, n_in, kept_in_full, tangent_outs);

  std::vector<ValueId> args = c.primals;
  if (!kept_in_body.empty()) {
    // The primal remat returns the saved values beside its outputs (the node emitted before it dies).
    ir::Graph primal_body = *body;
    std::vector<ValueId> outs = body->outputs();
    outs.insert(outs.end(), kept_in_body.begin(), kept_in_body.end());
    primal_body.set_outputs(outs);
    ir::Attrs attrs = c.attrs();
    attrs.set("body", ir::Graphs{std::make_shared<const ir::Graph>(std::move(primal_body))});
    std::vector<ValueId> results = c.add_multi(Op::remat, c.primals, attrs);
    for (size_t k = 0; k < n_out; ++k) c.outputs[k] = results[k];
    args.insert(args.end(), results.begin() + static_cast<long>(n_out), results.end());
  }
  args.insert(args.end(), tangent_args.begin(), tangent_args.end());
  auto pruned = std::make_shared<const ir::Graph>(std::move(tangent_body));
  return c.add_multi(Op::remat, args, {{"body", ir::Graphs{pruned}}, {"policy", policy_text}});
}

// The transpose of a tangent remat: its body's primal part is recomputed
// here, in the backward pass, then its linear part is transposed.
// A tangent operand can be known too (a zero tangent made concrete, for an
// argument not differentiated); the body is then reordered so that the known
// operands come first, as partial evaluation wants them.
ir::IdList remat_transpose(TransposeCtx& c) {
  const ir::GraphPtr& body_ptr = ir::attr<ir::Graphs>(c.node(), "body").at(0);
  std::vector<size_t> known, unknown;
  for (size_t i = 0; i < c.unknown.size(); ++i) (c.unknown[i] ? unknown : known).push_back(i);
  ir::GraphPtr body = body_ptr;
  if (!known.empty() && known.back() + 1 != known.size()) {
    const std::vector<ir::ValueType> types = body_ptr->input_types();
    std::vector<ir::ValueType> order;
    std::vector<size_t> bind(types.size());
    for (size_t j = 0; j < known.size(); ++j) bind[known[j]] = j;
    for (size_t j = 0; j < unknown.size(); ++j) bind[unknown[j]] = known.size() + j;
    for (size_t i : known) order.push_back(types[i]);
    for (size_t i : unknown) order.push_back(types[i]);
    std::vector<size_t> outs(body_ptr->outputs().size());
    for (size_t k = 0; k < outs.size(); ++k) outs[k] = k;
    body = ir::rebind_graph(*body_ptr, order, bind, outs);
  }
  std::vector<ValueId> primals;
  for (size_t i : known) primals.push_back(c.operands[i]);
  ir::GraphBuilder& b = c.emit().builder();
  PartialEval pe = partial_eval(*body, b, primals);
  std::vector<std::pair<ValueId, ValueId>> seeds;
  for (size_t k = 0; k < body->outputs().size(); ++k)
    if (c.cotangents[k] != kZero) seeds.emplace_back(body->outputs()[k], c.cotangents[k]);
  std::vector<ValueId> ct = transpose_linear(*body, pe, b, seeds);
  std::vector<ValueId> out(c.operands.size(), kZero);
  for (size_t j = 0; j < unknown.size(); ++j) out[unknown[j]] = ct[body->inputs()[known.size() + j]];
  return out;
}

std::vector<BatchedValue> remat_batch(BatchCtx& c) {
  ir::Attrs attrs = c.attrs();
  attrs.set("body",
            ir::Graphs{batch_subgraph(*graph_attr(c.node(), "body"), operand_dims(c), c.axis_size, c.axis_name)});
  return at_zero(c.add_multi(Op::remat, operand_values(c), attrs));
}

// ---- custom_lin

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

// custom_lin exists only between a JVP and its transpose. Differentiating it
// again in forward mode would need the JVP of the user's bwd with respect to
// the residuals, which a custom_vjp does not define; JAX refuses it too.
ir::IdList custom_lin_jvp(JvpCtx&) {
  throw UnsupportedError(
      "custom_lin: forward-mode differentiation of a custom_vjp function's tangent is not defined (its rule is a "
      "VJP); use reverse mode (grad, vjp, jacrev) over it, or custom_jvp");
}

// custom_lin's transpose is the user's bwd on (residuals, output cotangents).
ir::IdList custom_lin_transpose(TransposeCtx& c) {
  const ir::Graph& bwd = *ir::attr<ir::Graphs>(c.node(), "bwd").at(0);
  int64_t nres = ir::attr<int64_t>(c.node(), "num_residuals");
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

std::vector<BatchedValue> custom_lin_batch(BatchCtx& c) {
  const size_t nres = static_cast<size_t>(ir::attr<int64_t>(c.node(), "num_residuals"));
  const ir::Graph& bwd = *graph_attr(c.node(), "bwd");
  std::vector<ValueId> args;
  std::vector<int64_t> bwd_dims;  // residuals as they are, output cotangents at 0
  for (size_t i = 0; i < nres; ++i) {
    args.push_back(c.operands[i].value);
    bwd_dims.push_back(c.operands[i].dim);
  }
  for (size_t i = nres; i < c.operands.size(); ++i) args.push_back(c.at(i, 0));
  bwd_dims.resize(bwd.inputs().size(), 0);
  ir::Attrs attrs = c.attrs();
  attrs.set("bwd", ir::Graphs{batch_subgraph(bwd, bwd_dims, c.axis_size, c.axis_name)});
  return at_zero(c.add_multi(Op::custom_lin, args, attrs));
}

// ---- linear_call

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

// linear_call is linear in its linear operands: its tangent is the same call
// on their tangents. A residual with a tangent would need the derivative of
// `fun` and `transpose` with respect to it, which JAX does not define either.
ir::IdList linear_call_jvp(JvpCtx& c) {
  const size_t nres = static_cast<size_t>(ir::attr<int64_t>(c.node(), "num_residuals"));
  std::vector<ValueId> args(c.primals.begin(), c.primals.begin() + static_cast<long>(nres));
  for (size_t i = 0; i < nres; ++i)
    if (c.tangents[i] != kZero)
      throw UnsupportedError(
          "linear_call: residual " + std::to_string(i) +
          " has a tangent; a linear_call is differentiated only in its linear operands (JAX defines no more)");
  for (size_t i = nres; i < c.primals.size(); ++i) args.push_back(c.instantiate(c.tangents[i], c.primals[i]));
  return c.add_multi(Op::linear_call, args, c.node().attrs);
}

// linear_call's transpose is its `transpose` graph on (residuals, output
// cotangents); none was given (custom_linear_solve without transpose_solve)
// is an error naming what to pass.
ir::IdList linear_call_transpose(TransposeCtx& c) {
  const ir::Graphs& transpose = ir::attr<ir::Graphs>(c.node(), "transpose");
  if (transpose.empty())
    throw UnsupportedError(
        "linear_call: reverse mode needs the transpose of this linear function, and none was given "
        "(custom_linear_solve: pass transpose_solve, or symmetric = true)");
  const int64_t nres = ir::attr<int64_t>(c.node(), "num_residuals");
  for (int64_t i = 0; i < nres; ++i)
    if (c.unknown[static_cast<size_t>(i)])
      throw UnsupportedError("transpose: linear_call residual " + std::to_string(i) + " carries a tangent");
  std::vector<ValueId> args(c.operands.begin(), c.operands.begin() + nres);
  const std::vector<ir::ValueType> out_types = ir::attr<ir::Graphs>(c.node(), "fun").at(0)->output_types();
  for (size_t k = 0; k < c.cotangents.size(); ++k)
    args.push_back(c.cotangents[k] == kZero ? c.zeros(out_types[k]) : c.cotangents[k]);
  std::vector<ValueId> cts = c.emit().inline_graph(*transpose[0], args);
  std::vector<ValueId> out(static_cast<size_t>(nres), kZero);
  out.insert(out.end(), cts.begin(), cts.end());
  return out;
}

// linear_call: residuals keep their dims; linear operands move to 0, where
// the batched transpose puts their cotangents.
std::vector<BatchedValue> linear_call_batch(BatchCtx& c) {
  const size_t nres = static_cast<size_t>(ir::attr<int64_t>(c.node(), "num_residuals"));
  std::vector<ValueId> args;
  std::vector<int64_t> dims;
  for (size_t i = 0; i < c.operands.size(); ++i) {
    const bool residual = i < nres;
    args.push_back(residual ? c.operands[i].value : c.at(i, 0));
    dims.push_back(residual ? c.operands[i].dim : 0);
  }
  ir::Attrs attrs = c.attrs();
  attrs.set("fun", ir::Graphs{batch_subgraph(*graph_attr(c.node(), "fun"), dims, c.axis_size, c.axis_name)});
  const ir::Graphs& transpose = ir::attr<ir::Graphs>(c.node(), "transpose");
  if (!transpose.empty()) {
    std::vector<int64_t> t_dims(dims.begin(), dims.begin() + static_cast<long>(nres));
    t_dims.resize(transpose[0]->inputs().size(), 0);  // output cotangents at 0
    attrs.set("transpose", ir::Graphs{batch_subgraph(*transpose[0], t_dims, c.axis_size, c.axis_name)});
  }
  return at_zero(c.add_multi(Op::linear_call, args, attrs));
}

}  // namespace graft::ops
