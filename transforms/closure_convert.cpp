// Closure conversion of custom_jvp and custom_vjp calls (closure_convert.h).
// The converted graphs are built once per trace; every transform then treats
// the closed-over values as ordinary operands (vmap batches them, jit binds them).
#include "transforms/closure_convert.h"

#include "ir/builder.h"
#include "ir/dtype.h"
#include "ir/inline.h"
#include "transforms/jvp.h"
#include "transforms/rules/jvp_rule.h"
#include "transforms/vjp.h"

namespace graft::transforms {

using ir::ValueId;
using Ids = std::vector<ValueId>;

namespace {

Ids slice(const Ids& v, size_t from, size_t count) {
  return Ids(v.begin() + static_cast<long>(from), v.begin() + static_cast<long>(from + count));
}

Ids concat(Ids a, const Ids& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::vector<ir::ValueType> concat_types(std::vector<ir::ValueType> a, const std::vector<ir::ValueType>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

Ids inputs_like(ir::GraphBuilder& b, const std::vector<ir::ValueType>& types) {
  Ids ids;
  for (const ir::ValueType& t : types) ids.push_back(b.input(t));
  return ids;
}

std::vector<ir::ValueType> types_of(const ir::Graph& g, const Ids& ids) {
  std::vector<ir::ValueType> t;
  for (ValueId v : ids) t.push_back(g.type(v));
  return t;
}

// Flags of `call`'s inputs: its closed-over values (the last `values`) that are inexact.
std::vector<bool> closed_float_inputs(const ir::Graph& call, size_t values) {
  const size_t n = call.inputs().size() - values;
  std::vector<bool> flags(call.inputs().size(), false);
  for (size_t i = n; i < flags.size(); ++i) flags[i] = ir::is_inexact(call.type(call.inputs()[i]).dtype);
  return flags;
}

bool any(const std::vector<bool>& flags) {
  for (bool f : flags)
    if (f) return true;
  return false;
}

// `call` (args.., its values..) as a graph of (args.., every closed-over value..).
ir::GraphPtr call_taking_all(const ir::Graph& call, const std::vector<ir::ValueType>& arg_types,
                             const std::vector<ir::ValueType>& value_types, size_t call_values) {
  ir::GraphBuilder b;
  Ids args = inputs_like(b, arg_types), values = inputs_like(b, value_types);
  return b.finish(ir::inline_graph(b, call, concat(args, slice(values, 0, call_values))));
}

}  // namespace

ClosedCustomJvp close_custom_jvp(const ir::Graph& call, size_t call_values, const ir::Graph& rule, size_t rule_values) {
  const size_t n = call.inputs().size() - call_values;
  const std::vector<ir::ValueType> arg_types = types_of(call, slice(call.inputs(), 0, n));
  const std::vector<ir::ValueType> value_types = concat_types(types_of(call, slice(call.inputs(), n, call_values)),
                                                              types_of(rule, slice(rule.inputs(), 2 * n, rule_values)));
  ClosedCustomJvp out;
  out.call = call_taking_all(call, arg_types, value_types, call_values);
  // jvp: (args.., C.., their tangents..) -> (outputs.., the rule's tangents +
  // the call's own tangents with respect to the values it closes over).
  ir::GraphBuilder b;
  Ids args = inputs_like(b, arg_types), values = inputs_like(b, value_types);
  Ids arg_tangents = inputs_like(b, arg_types), value_tangents = inputs_like(b, value_types);
  Ids rule_out = ir::inline_graph(b, rule, concat(concat(args, arg_tangents), slice(values, call_values, rule_values)));
  const size_t m = rule_out.size() / 2;
  const std::vector<bool> flags = closed_float_inputs(call, call_values);
  if (any(flags)) {
    ir::GraphPtr j = jvp_graph(call, flags);
    Ids j_in = concat(args, slice(values, 0, call_values));
    for (size_t i = n; i < flags.size(); ++i)
      if (flags[i]) j_in.push_back(value_tangents[i - n]);
    Ids j_out = ir::inline_graph(b, *j, j_in);
    for (size_t k = 0; k < m; ++k)
      if (ir::is_inexact(b.type(rule_out[m + k]).dtype))
        rule_out[m + k] = b.add1(ir::Op::add, {rule_out[m + k], j_out[m + k]});
  }
  out.jvp = b.finish(rule_out);
  return out;
}

ClosedCustomVjp close_custom_vjp(const ir::Graph& call, size_t call_values, const ir::Graph& fwd, size_t fwd_values,
                                 const ir::Graph& bwd, size_t bwd_values, int64_t num_residuals) {
  const size_t n = call.inputs().size() - call_values, m = call.outputs().size();
  const size_t nres = static_cast<size_t>(num_residuals);
  const std::vector<ir::ValueType> arg_types = types_of(call, slice(call.inputs(), 0, n));
  const std::vector<ir::ValueType> value_types =
      concat_types(concat_types(types_of(call, slice(call.inputs(), n, call_values)),
                                types_of(fwd, slice(fwd.inputs(), n, fwd_values))),
                   types_of(bwd, slice(bwd.inputs(), nres + m, bwd_values)));
  const std::vector<bool> flags = closed_float_inputs(call, call_values);
  // The backward pass differentiates the call itself with respect to its
  // float values, so it keeps the call's operands as residuals then.
  const bool through_call = any(flags);
  ClosedCustomVjp out;
  out.call = call_taking_all(call, arg_types, value_types, call_values);
  {
    // fwd: (args.., C..) -> (outputs.., residuals.., [args.., call's values..], bwd's values..)
    ir::GraphBuilder b;
    Ids args = inputs_like(b, arg_types), values = inputs_like(b, value_types);
    Ids outs = ir::inline_graph(b, fwd, concat(args, slice(values, call_values, fwd_values)));
    if (through_call) outs = concat(concat(outs, args), slice(values, 0, call_values));
    outs = concat(outs, slice(values, call_values + fwd_values, bwd_values));
    out.num_residuals = static_cast<int64_t>(outs.size() - m);
    out.fwd = b.finish(outs);
  }
  // bwd: (residuals.., [args.., call's values..], bwd's values.., output cotangents..)
  //   -> (the user's argument cotangents.., the call's cotangents of its float values, zeros for the rest)
  ir::GraphBuilder b;
  Ids res = inputs_like(b, types_of(fwd, slice(fwd.outputs(), m, nres)));
  Ids args, call_vals;
  if (through_call) {
    args = inputs_like(b, arg_types);
    call_vals = inputs_like(b, std::vector<ir::ValueType>(value_types.begin(), value_types.begin() + call_values));
  }
  Ids bwd_vals =
      inputs_like(b, std::vector<ir::ValueType>(value_types.end() - static_cast<long>(bwd_values), value_types.end()));
  Ids cts = inputs_like(b, call.output_types());
  Ids grads = ir::inline_graph(b, bwd, concat(concat(res, cts), bwd_vals));
  Ids value_grads(value_types.size(), -1);
  if (through_call) {
    ir::GraphPtr v = vjp_graph(call, flags);
    Ids v_out = ir::inline_graph(b, *v, concat(concat(args, call_vals), cts));
    size_t next = m;
    for (size_t i = n; i < flags.size(); ++i)
      if (flags[i]) value_grads[i - n] = v_out[next++];
  }
  for (size_t k = 0; k < value_types.size(); ++k)
    if (value_grads[k] < 0) value_grads[k] = emit_full(b, 0.0, value_types[k]);
  out.bwd = b.finish(concat(grads, value_grads));
  return out;
}

}  // namespace graft::transforms
