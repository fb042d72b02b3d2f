// The non-template side of the autodiff wrappers.
#include "graft/autodiff.h"
#include "graft/jacobian.h"
#include "graft/ops.h"

#include "api/array_impl.h"
#include "api/dispatch.h"
#include "graft/errors.h"
#include "ir/dtype.h"
#include "ir/remat_policy.h"
#include "transforms/closure_convert.h"
#include "transforms/jvp.h"
#include "transforms/linearize.h"
#include "transforms/vjp.h"

namespace graft::detail {

std::vector<Array> jvp_call(const Graph& graph, const std::vector<Array>& captured, const std::vector<Array>& primals,
                            const std::vector<Array>& tangents) {
  if (tangents.size() != primals.size())
    throw ShapeError("jvp: " + std::to_string(tangents.size()) + " tangent arrays for " +
                     std::to_string(primals.size()) + " primal arrays; they must have one structure");
  for (size_t i = 0; i < primals.size(); ++i) {
    const ir::ValueType& p = checked_impl(primals[i], "jvp").type;
    const ir::ValueType& t = checked_impl(tangents[i], "jvp").type;
    if (!ir::is_inexact(p.dtype))
      throw DTypeError("jvp: primal " + std::to_string(i) + " is " + ir::type_str(p) +
                       "; only float arrays can be differentiated (pass integers as static values)");
    if (p != t)
      throw ShapeError("jvp: tangent " + std::to_string(i) + " is " + ir::type_str(t) + " but its primal is " +
                       ir::type_str(p));
  }
  std::vector<bool> has_tangent(primals.size(), true);
  has_tangent.resize(primals.size() + captured.size(), false);  // closed-over values are constants here
  ir::GraphPtr jg = transforms::jvp_graph(graph.ir(), has_tangent);
  std::vector<Array> inputs = primals;
  inputs.insert(inputs.end(), captured.begin(), captured.end());
  inputs.insert(inputs.end(), tangents.begin(), tangents.end());
  return call_graph(*jg, inputs);
}

Graph grad_graph(const Graph& graph, size_t num_captured, const std::vector<Array>& leaves,
                 const std::vector<bool>& wrt, bool with_aux, bool holomorphic, size_t num_ref_outputs) {
  const ir::Graph& g = graph.ir();
  const size_t returned = g.outputs().size() - num_ref_outputs;
  if (returned == 0 || (!with_aux && returned != 1))
    throw ShapeError("grad: the function must return one scalar float Array, it returns " + std::to_string(returned) +
                     " arrays" + (with_aux ? "" : " (use has_aux to return auxiliary values beside the loss)"));
  const ir::ValueType& out = g.type(g.outputs()[0]);
  // Where the returned value was computed: the user's line.
  std::string made;
  for (const ir::Node& n : g.nodes())
    for (ir::ValueId v : n.outputs)
      if (v == g.outputs()[0] && !n.loc.empty()) made = " (computed at " + ir::loc_str(n.loc) + ")";
  if (out.rank() != 0)
    throw ShapeError("grad: the function must return a scalar, it returns " + ir::type_str(out) + made +
                     "; sum it, or use vjp or jacrev for non-scalar outputs");
  if (holomorphic) {
    if (!ir::is_complex(out.dtype))
      throw DTypeError("grad(holomorphic): the function must return a complex scalar, it returns " + ir::type_str(out) +
                       made);
  } else if (!ir::is_floating(out.dtype)) {
    throw DTypeError("grad: the function must return a real float, it returns " + ir::type_str(out) + made +
                     (ir::is_complex(out.dtype) ? " (for a holomorphic function, use grad(f, holomorphic))" : ""));
  }
  for (size_t i = 0; i < leaves.size(); ++i) {
    const DType d = checked_impl(leaves[i], "grad").type.dtype;
    if (wrt[i] && !(holomorphic ? ir::is_complex(d) : ir::is_inexact(d)))
      throw DTypeError("grad: cannot differentiate with respect to " + ir::type_str(leaves[i].impl()->type) +
                       " (argument leaf " + std::to_string(i) + "); " +
                       (holomorphic ? "holomorphic gradients are taken of complex arrays only"
                                    : "only float and complex arrays have gradients"));
  }
  std::vector<bool> flags = wrt;
  flags.resize(leaves.size() + num_captured, false);  // closed-over values are constants
  return Graph(transforms::vjp_graph(g, flags));
}

std::vector<Array> run_grad_graph(const Graph& vjp, const std::vector<Array>& leaves, const std::vector<Array>& captured,
                                  size_t num_outputs) {
  const ir::Graph& vg = vjp.ir();
  std::vector<Array> inputs = leaves;
  inputs.insert(inputs.end(), captured.begin(), captured.end());
  // The value's cotangent is one; auxiliary outputs are carried along, not differentiated.
  const auto& in = vg.inputs();
  for (size_t k = 0; k < num_outputs; ++k) {
    const ir::ValueType& t = vg.type(in[in.size() - num_outputs + k]);
    inputs.push_back(k == 0 ? scalar(1.0, t.dtype) : zeros(t.shape, t.dtype));
  }
  return call_graph(vg, inputs);
}

namespace {

// Primals (or tangents) must be float arrays of the expected types.
void check_float_leaves(const char* what, const std::vector<Array>& leaves) {
  for (size_t i = 0; i < leaves.size(); ++i) {
    const ir::ValueType& t = checked_impl(leaves[i], what).type;
    if (!ir::is_inexact(t.dtype))
      throw DTypeError(std::string(what) + ": primal " + std::to_string(i) + " is " + ir::type_str(t) +
                       "; only float arrays can be differentiated (pass integers as static values)");
  }
}

}  // namespace

LinearizedCall linearize_call(const Graph& graph, const std::vector<Array>& captured, const std::vector<Array>& primals) {
  check_float_leaves("linearize", primals);
  std::vector<bool> has_tangent(primals.size(), true);
  has_tangent.resize(primals.size() + captured.size(), false);  // closed-over values are constants here
  transforms::Linearized lin = transforms::linearize_graph(graph.ir(), has_tangent);
  std::vector<Array> inputs = primals;
  inputs.insert(inputs.end(), captured.begin(), captured.end());
  std::vector<Array> all = call_graph(*lin.primal, inputs);
  const size_t n_out = all.size() - lin.num_residuals;
  return LinearizedCall{std::vector<Array>(all.begin(), all.begin() + static_cast<long>(n_out)),
                        std::vector<Array>(all.begin() + static_cast<long>(n_out), all.end()), Graph(lin.linear)};
}

std::vector<Array> run_linear(const Graph& linear, const std::vector<Array>& residuals,
                              const std::vector<Array>& tangents) {
  const ir::Graph& g = linear.ir();
  const size_t want = g.inputs().size() - residuals.size();
  if (tangents.size() != want)
    throw ShapeError("linearize: " + std::to_string(tangents.size()) + " tangent arrays for " + std::to_string(want) +
                     " primal arrays; they must have the primals' structure");
  for (size_t i = 0; i < want; ++i) {
    const ir::ValueType& expected = g.type(g.inputs()[residuals.size() + i]);
    const ir::ValueType& got = checked_impl(tangents[i], "linearize").type;
    if (got != expected)
      throw ShapeError("linearize: tangent " + std::to_string(i) + " is " + ir::type_str(got) + " but its primal is " +
                       ir::type_str(expected));
  }
  std::vector<Array> inputs = residuals;
  inputs.insert(inputs.end(), tangents.begin(), tangents.end());
  return call_graph(g, inputs);
}

bool any_traced(const std::vector<Array>& arrays) {
  for (const Array& a : arrays)
    if (checked_impl(a, "custom_jvp").traced()) return true;
  return false;
}

std::vector<Array> run_graph(const Graph& graph, const std::vector<Array>& inputs) {
  return call_graph(graph.ir(), inputs);
}

std::vector<Array> vjp_call(const Graph& graph, const std::vector<Array>& captured, const std::vector<Array>& leaves,
                            const std::vector<Array>& out_cotangents) {
  const ir::Graph& g = graph.ir();
  if (out_cotangents.size() != g.outputs().size())
    throw ShapeError("vjp: " + std::to_string(out_cotangents.size()) + " cotangent arrays for " +
                     std::to_string(g.outputs().size()) + " outputs; they must have the output's structure");
  for (size_t k = 0; k < out_cotangents.size(); ++k) {
    const ir::ValueType& want = g.type(g.outputs()[k]);
    const ir::ValueType& got = checked_impl(out_cotangents[k], "vjp").type;
    if (got != want)
      throw ShapeError("vjp: cotangent " + std::to_string(k) + " is " + ir::type_str(got) + " but the output is " +
                       ir::type_str(want));
  }
  std::vector<bool> flags;
  for (const Array& a : leaves) flags.push_back(ir::is_inexact(checked_impl(a, "vjp").type.dtype));
  flags.resize(leaves.size() + captured.size(), false);
  ir::GraphPtr vg = transforms::vjp_graph(g, flags);
  std::vector<Array> inputs = leaves;
  inputs.insert(inputs.end(), captured.begin(), captured.end());
  inputs.insert(inputs.end(), out_cotangents.begin(), out_cotangents.end());
  std::vector<Array> res = call_graph(*vg, inputs);
  std::vector<Array> grads;
  size_t next = g.outputs().size();
  for (size_t i = 0; i < leaves.size(); ++i)
    grads.push_back(flags[i] ? res[next++] : zeros(leaves[i].shape(), leaves[i].dtype()));
  return grads;
}

namespace {

std::vector<Array> joined(std::vector<Array> a, const std::vector<std::vector<Array>>& more) {
  for (const auto& m : more) a.insert(a.end(), m.begin(), m.end());
  return a;
}

}  // namespace

// Values the functions close over that an enclosing transform traces are
// closure-converted (transforms/closure_convert.h): they become trailing
// operands, as jax.closure_convert makes them.
std::vector<Array> custom_jvp_bind(const Graph& call, const std::vector<Array>& call_captured, const Graph& rule,
                                   const std::vector<Array>& rule_captured, const std::vector<Array>& args) {
  if (call_captured.empty() && rule_captured.empty()) {
    ir::Attrs attrs{{"call", ir::Graphs{call.ir_ptr()}}, {"jvp", ir::Graphs{rule.ir_ptr()}}};
    return bind(ir::Op::custom_jvp_call, args, attrs, std::source_location::current());
  }
  transforms::ClosedCustomJvp closed =
      transforms::close_custom_jvp(call.ir(), call_captured.size(), rule.ir(), rule_captured.size());
  ir::Attrs attrs{{"call", ir::Graphs{closed.call}}, {"jvp", ir::Graphs{closed.jvp}}};
  return bind(ir::Op::custom_jvp_call, joined(args, {call_captured, rule_captured}), attrs,
              std::source_location::current());
}

std::vector<Array> custom_vjp_bind(const std::vector<const Graph*>& graphs, const std::vector<std::vector<Array>>& captured,
                                   int64_t num_residuals, const std::vector<Array>& args) {
  if (captured[0].empty() && captured[1].empty() && captured[2].empty()) {
    ir::Attrs attrs{{"call", ir::Graphs{graphs[0]->ir_ptr()}},
                    {"fwd", ir::Graphs{graphs[1]->ir_ptr()}},
                    {"bwd", ir::Graphs{graphs[2]->ir_ptr()}},
                    {"num_residuals", num_residuals}};
    return bind(ir::Op::custom_vjp_call, args, attrs, std::source_location::current());
  }
  transforms::ClosedCustomVjp closed =
      transforms::close_custom_vjp(graphs[0]->ir(), captured[0].size(), graphs[1]->ir(), captured[1].size(),
                                   graphs[2]->ir(), captured[2].size(), num_residuals);
  ir::Attrs attrs{{"call", ir::Graphs{closed.call}},
                  {"fwd", ir::Graphs{closed.fwd}},
                  {"bwd", ir::Graphs{closed.bwd}},
                  {"num_residuals", closed.num_residuals}};
  return bind(ir::Op::custom_vjp_call, joined(args, captured), attrs, std::source_location::current());
}

// The body takes (args.., captured..) already: the captured values are the call's trailing operands.
std::vector<Array> remat_bind(const Graph& body, const std::vector<Array>& captured, const std::vector<Array>& args,
                              const std::string& policy) {
  return bind(ir::Op::remat, joined(args, {captured}), {{"body", ir::Graphs{body.ir_ptr()}}, {"policy", policy}},
              std::source_location::current());
}

}  // namespace graft::detail

namespace graft::checkpoint_policies {

namespace {
Policy policy_of(ir::RematSave save, const std::vector<std::string>& names = {}) {
  return Policy(ir::remat_policy_text({save, names}));
}
}  // namespace

const Policy everything_saveable = policy_of(ir::RematSave::everything);
const Policy nothing_saveable = policy_of(ir::RematSave::nothing);
const Policy dots_saveable = policy_of(ir::RematSave::dots);
const Policy dots_with_no_batch_dims_saveable = policy_of(ir::RematSave::dots_with_no_batch_dims);

Policy save_only_these_names(const std::vector<std::string>& names) {
  return policy_of(ir::RematSave::only_names, names);
}

Policy save_anything_except_these_names(const std::vector<std::string>& names) {
  return policy_of(ir::RematSave::anything_except_names, names);
}

}  // namespace graft::checkpoint_policies

namespace graft {

Array checkpoint_name(ArrayAt x, const std::string& name) {
  const Array& a = x.array;
  detail::checked_impl(a, "checkpoint_name");
  // Outside a trace there is nothing to checkpoint: the array itself, as JAX's.
  if (!detail::any_traced({a})) return a;
  return detail::bind1(ir::Op::checkpoint_name, {a}, {{"name", name}}, x.loc);
}

}  // namespace graft
