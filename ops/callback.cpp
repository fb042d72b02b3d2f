// The callback op family: each op's shape/dtype rule, JVP, transpose and
// batching rule side by side, op by op in ops.def order (the rules an op
// takes from ops.def's standard columns are not repeated here).
//
// Shape/dtype rules of host callbacks: the outputs are the types the
// callback declares (ShapeDtype in the API); operands are whatever the user
// passed.
//
// Transform rules of host callbacks (pure_callback, io_callback).
//
// JVP: a callback is a C++ function graft cannot see into, so it has no
// derivative. A tangent flowing into one whose outputs are floats is an
// UnsupportedError naming the callback and pointing at custom_jvp and
// custom_vjp, as JAX refuses too; with no such tangent (or no float
// outputs: a debug print) the outputs get zero tangents and the node stays
// in the primal computation.
//
// Batching: pure_callback by its vmap_method; io_callback always example
// by example, in order.
#include "graft/errors.h"
#include "ir/attr_access.h"
#include "ir/dtype.h"
#include "ops/rules.h"

namespace graft::ops {

namespace {

const ir::HostCallback& callback_of(const ir::Node& node) {
  const ir::HostCallbackPtr& cb = ir::attr<ir::HostCallbackPtr>(node, "callback");
  if (!cb) throw GraphFormatError(std::string(ir::op_name(node.op)) + ": null callback");
  return *cb;
}

ir::IdList callback_jvp(JvpCtx& c, const char* what) {
  bool has_tangent = false;
  for (ValueId t : c.tangents) has_tangent = has_tangent || t != kZero;
  bool float_outputs = false;
  for (ValueId v : c.outputs) float_outputs = float_outputs || ir::is_inexact(c.type(v).dtype);
  if (has_tangent && float_outputs) {
    const ir::HostCallback& cb = callback_of(c.node());
    throw UnsupportedError(cb.name + ": " + what +
                           " has no derivative (graft cannot see into the C++ function); wrap the call in "
                           "custom_jvp or custom_vjp to give it one");
  }
  return ir::IdList(c.outputs.size(), kZero);
}

using Batched = std::vector<BatchedValue>;

// A scan over the examples whose body is the node on one example: unbatched
// operands are the scan's constants, batched ones (at axis 0) its xs, and
// the outputs are stacked on axis 0. Runs the callback axis_size times, in order.
Batched sequential(BatchCtx& c) {
  ir::GraphBuilder body;
  std::vector<ValueId> consts, xs;
  std::vector<ValueId> body_args(c.operands.size());
  for (size_t i = 0; i < c.operands.size(); ++i)
    if (c.operands[i].dim == kNotBatched) {
      consts.push_back(c.operands[i].value);
      body_args[i] = body.input(c.unbatched_type(i));
    }
  for (size_t i = 0; i < c.operands.size(); ++i)
    if (c.operands[i].dim != kNotBatched) {
      xs.push_back(c.at(i, 0));
      body_args[i] = body.input(c.unbatched_type(i));
    }
  ir::IdList outs = body.add(c.node().op, body_args, c.attrs(), c.node().loc, c.node().scope);
  std::vector<ValueId> inputs = consts;
  inputs.insert(inputs.end(), xs.begin(), xs.end());
  ir::Attrs attrs{{"body", ir::Graphs{body.finish(outs)}},
                  {"length", c.axis_size},
                  {"num_carry", int64_t{0}},
                  {"num_consts", static_cast<int64_t>(consts.size())},
                  {"reverse", int64_t{0}}};
  return at_zero(c.add_multi(Op::scan, inputs, attrs));
}

// One call on the whole batch: batched operands at axis 0, unbatched ones
// given a size-1 axis 0 (expand_dims) or broadcast to the batch
// (broadcast_all); every declared result gains the batch axis.
Batched whole_batch(BatchCtx& c, bool broadcast_all) {
  std::vector<ValueId> args;
  for (size_t i = 0; i < c.operands.size(); ++i) {
    if (c.operands[i].dim != kNotBatched || broadcast_all) {
      args.push_back(c.at(i, 0));
      continue;
    }
    ir::ValueType t = c.unbatched_type(i);
    ir::Ints shape = t.shape;
    shape.insert(shape.begin(), 1);
    args.push_back(c.add(Op::reshape, {c.operands[i].value}, {{"new_sizes", shape}}));
  }
  auto batched = std::make_shared<ir::HostCallback>(callback_of(c.node()));
  for (ir::ValueType& t : batched->results) t.shape.insert(t.shape.begin(), c.axis_size);
  ir::Attrs attrs = c.attrs();
  attrs.set("callback", ir::HostCallbackPtr(std::move(batched)));
  return at_zero(c.add_multi(c.node().op, args, attrs));
}

}  // namespace

// ---- pure_callback

OutTypes pure_callback_shape(const RuleCtx& c) {
  const std::string& method = c.attr_string("vmap_method");
  if (method != "sequential" && method != "expand_dims" && method != "broadcast_all")
    c.format_error("vmap_method must be sequential, expand_dims or broadcast_all, not '" + method + "'");
  return c.attr_callback("callback").results;
}

ir::IdList pure_callback_jvp(JvpCtx& c) { return callback_jvp(c, "pure_callback"); }

std::vector<BatchedValue> pure_callback_batch(BatchCtx& c) {
  const std::string& method = ir::attr<std::string>(c.node(), "vmap_method");
  if (method == "sequential") return sequential(c);
  return whole_batch(c, method == "broadcast_all");
}

// ---- io_callback

OutTypes io_callback_shape(const RuleCtx& c) {
  c.attr_bool("ordered");
  return c.attr_callback("callback").results;
}

ir::IdList io_callback_jvp(JvpCtx& c) { return callback_jvp(c, "io_callback"); }

std::vector<BatchedValue> io_callback_batch(BatchCtx& c) { return sequential(c); }

}  // namespace graft::ops
