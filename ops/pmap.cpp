// The pmap op family: each op's shape/dtype rule, JVP, transpose and
// batching rule side by side, op by op in ops.def order (the rules an op
// takes from ops.def's standard columns are not repeated here).
//
// Shape/dtype rule of pmap, a function run once per device.
//
// pmap(args..)  body: one replica's args -> one replica's outs. A mapped
//               operand (in_dims[i] >= 0) has mapped_size at that dimension
//               and the body sees it without; a replicated one (-1) is seen
//               whole. Outputs stack the replicas' results at out_dims[k]
//               (mapped_size inserted there), or are replica 0's (-1).
//               axis_size (every process's replicas) is a multiple of
//               mapped_size; devices is empty or lists axis_size ids.
//
// Transform rules of pmap: each is a pmap again, over the body transformed
// per replica (as JAX's xla_pmap), so derivatives and batches run
// replicated across the devices too.
//
// JVP: the primal node stays; the tangents come from a second pmap whose
//   body is the body's JVP restricted to its tangents, mapped like the
//   primals. Like remat's, that body recomputes the primal values it needs,
//   so partial evaluation keeps the node whole on the unknown side and the
//   transpose recomputes them per replica in the backward pass.
// Transpose: a pmap of the body's transpose. A replicated operand's
//   cotangent is every replica's contribution, so the transposed body psums
//   it and returns it as replicated. A replicated output (out_dims -1) is
//   replica 0's value, so its cotangent reaches replica 0 alone.
// Batching: batched operands move their batch axis to 0 (mapped ones then
//   have their mapped dimension one further out), the body is batched at 0,
//   and every output stacks the replicas one dimension further out, leaving
//   the batch axis at 0.
#include <string>

#include "graft/errors.h"
#include "ir/attr_access.h"
#include "ir/dtype.h"
#include "ir/inline.h"
#include "ir/passes.h"
#include "ops/rules.h"
#include "transforms/jvp.h"
#include "transforms/transpose.h"

namespace graft::ops {

namespace {

const ir::Graph& body_of(const ir::Node& node) { return *ir::attr<ir::Graphs>(node, "body").at(0); }

const ir::Ints& ints_of(const ir::Node& node, const char* name) { return ir::attr<ir::Ints>(node, name); }

// The name the transposed body's collectives use: the pmap's own, or (for a
// pmap without one, whose body then has no collectives) a reserved one.
std::string axis_for_collectives(const ir::Node& node) {
  const std::string& name = ir::attr<std::string>(node, "axis_name");
  return name.empty() ? "__pmap_transpose" : name;
}

}  // namespace

// ---- pmap

OutTypes pmap_shape(const RuleCtx& c) {
  c.attr_string("axis_name");  // may be empty: a body without collectives needs no name
  const int64_t n = c.attr_int("mapped_size");
  const int64_t total = c.attr_int("axis_size");
  if (n < 1 || n > (int64_t{1} << 20)) c.shape_error("mapped_size " + std::to_string(n) + " is out of range");
  if (total < n || total % n != 0)
    c.shape_error("axis_size " + std::to_string(total) + " is not a multiple of mapped_size " + std::to_string(n));
  const Ints& devices = c.attr_ints("devices");
  if (!devices.empty() && static_cast<int64_t>(devices.size()) != total)
    c.shape_error("devices lists " + std::to_string(devices.size()) + " ids for axis_size " + std::to_string(total));
  const Ints& in_dims = c.attr_ints("in_dims");
  if (in_dims.size() != c.num_inputs())
    c.shape_error("in_dims has " + std::to_string(in_dims.size()) + " entries for " + std::to_string(c.num_inputs()) +
                  " operands");
  std::vector<ValueType> replica_in;
  for (size_t i = 0; i < c.num_inputs(); ++i) {
    ValueType t = c.input(i);
    const int64_t d = in_dims[i];
    if (d != -1) {
      const int axis = c.axis(d, t.rank(), "in_dims[" + std::to_string(i) + "]");
      if (t.shape[static_cast<size_t>(axis)] != n)
        c.shape_error("operand " + std::to_string(i) + " " + type_str(t) + " has size " +
                      std::to_string(t.shape[static_cast<size_t>(axis)]) + " at its mapped dimension " +
                      std::to_string(d) + ", not mapped_size " + std::to_string(n));
      t.shape.erase(t.shape.begin() + axis);
    }
    replica_in.push_back(std::move(t));
  }
  const Graph& body = c.attr_graph("body");
  c.check_signature(body, "body", replica_in, nullptr);
  std::vector<ValueType> outs = body.output_types();
  const Ints& out_dims = c.attr_ints("out_dims");
  if (out_dims.size() != outs.size())
    c.shape_error("out_dims has " + std::to_string(out_dims.size()) + " entries for " + std::to_string(outs.size()) +
                  " body outputs");
  for (size_t k = 0; k < outs.size(); ++k) {
    const int64_t d = out_dims[k];
    if (d == -1) continue;
    const int axis = c.axis(d, outs[k].rank() + 1, "out_dims[" + std::to_string(k) + "]");
    outs[k].shape.insert(outs[k].shape.begin() + axis, n);
  }
  return outs;
}

ir::IdList pmap_jvp(JvpCtx& c) {
  const ir::Graph& body = body_of(c.node());
  const ir::Ints& in_dims = ints_of(c.node(), "in_dims");
  std::vector<bool> has_tangent;
  std::vector<ValueId> args = c.primals;
  ir::Ints dims = in_dims;
  for (size_t i = 0; i < c.primals.size(); ++i) {
    const bool is_float = ir::is_inexact(c.type(c.primals[i]).dtype);
    has_tangent.push_back(is_float);
    if (!is_float) continue;
    args.push_back(c.instantiate(c.tangents[i], c.primals[i]));
    dims.push_back(in_dims[i]);
  }
  ir::GraphPtr full = jvp_graph(body, has_tangent);
  ir::Graph tangent_body = *full;
  const size_t n_out = body.outputs().size();
  tangent_body.set_outputs(
      std::vector<ValueId>(full->outputs().begin() + static_cast<long>(n_out), full->outputs().end()));
  ir::Attrs attrs = c.attrs();
  attrs.set("body", ir::Graphs{std::make_shared<const ir::Graph>(ir::recomputation_dce(std::move(tangent_body)))});
  attrs.set("in_dims", dims);
  return c.add_multi(Op::pmap, args, attrs);
}

ir::IdList pmap_transpose(TransposeCtx& c) {
  const ir::Graph& body = body_of(c.node());
  const ir::Ints& in_dims = ints_of(c.node(), "in_dims");
  const ir::Ints& out_dims = ints_of(c.node(), "out_dims");
  const std::string axis = axis_for_collectives(c.node());
  // The transposed body: (known operands' slices, output cotangents' slices)
  // -> unknown operands' cotangent slices.
  ir::GraphPtr core = transpose_graph(body, c.unknown);
  const std::vector<ir::ValueType> body_in = body.input_types();
  const std::vector<ir::ValueType> body_out = body.output_types();
  ir::GraphBuilder b;
  std::vector<ValueId> inner;
  std::vector<ValueId> operands;
  ir::Ints dims;
  for (size_t i = 0; i < c.operands.size(); ++i) {
    if (c.unknown[i]) continue;
    inner.push_back(b.input(body_in[i]));
    operands.push_back(c.operands[i]);
    dims.push_back(in_dims[i]);
  }
  const ir::Attrs index_attrs{{"axis_name", axis}};
  for (size_t k = 0; k < body_out.size(); ++k) {
    const ir::ValueType& t = body_out[k];
    if (c.cotangents[k] == kZero) {  // made inside the body: nothing to split
      inner.push_back(emit_full(b, 0, t));
      continue;
    }
    ValueId ct = b.input(t);
    if (out_dims[k] == -1) {  // replica 0's value: only replica 0 receives its cotangent
      ValueId index = b.add1(Op::axis_index, {}, index_attrs);
      ValueId first = b.add1(Op::eq, {index, emit_full(b, 0, ir::ValueType{DType::i32, {}})});
      if (t.rank() > 0)
        first =
            b.add1(Op::broadcast_in_dim, {first}, {{"shape", ir::Ints(t.shape)}, {"broadcast_dimensions", ir::Ints{}}});
      ct = b.add1(Op::select, {first, ct, emit_full(b, 0, t)});
    }
    inner.push_back(ct);
    operands.push_back(c.cotangents[k]);
    dims.push_back(out_dims[k]);
  }
  std::vector<ValueId> cts = ir::inline_graph(b, *core, inner);
  ir::Ints result_dims;
  size_t next = 0;
  for (size_t i = 0; i < c.operands.size(); ++i) {
    if (!c.unknown[i]) continue;
    if (in_dims[i] == -1) cts[next] = b.add1(Op::psum, {cts[next]}, {{"axis_name", axis}});  // every replica's part
    result_dims.push_back(in_dims[i]);
    ++next;
  }
  ir::Attrs attrs = c.attrs();
  attrs.set("axis_name", axis);
  attrs.set("body", ir::Graphs{b.finish(cts)});
  attrs.set("in_dims", dims);
  attrs.set("out_dims", result_dims);
  std::vector<ValueId> outs = c.emit().add_multi(Op::pmap, operands, attrs);
  std::vector<ValueId> result(c.operands.size(), kZero);
  next = 0;
  for (size_t i = 0; i < c.operands.size(); ++i)
    if (c.unknown[i]) result[i] = outs[next++];
  return result;
}

std::vector<BatchedValue> pmap_batch(BatchCtx& c) {
  const ir::Ints& in_dims = ints_of(c.node(), "in_dims");
  const ir::Ints& out_dims = ints_of(c.node(), "out_dims");
  std::vector<ValueId> args;
  std::vector<int64_t> body_dims;
  ir::Ints dims;
  for (size_t i = 0; i < c.operands.size(); ++i) {
    if (c.operands[i].dim == kNotBatched) {
      args.push_back(c.operands[i].value);
      body_dims.push_back(kNotBatched);
      dims.push_back(in_dims[i]);
    } else {
      args.push_back(c.at(i, 0));
      body_dims.push_back(0);
      dims.push_back(in_dims[i] == -1 ? -1 : in_dims[i] + 1);
    }
  }
  ir::Ints outs_at;
  for (int64_t d : out_dims) outs_at.push_back(d == -1 ? -1 : d + 1);
  ir::Attrs attrs = c.attrs();
  attrs.set("body", ir::Graphs{batch_subgraph(body_of(c.node()), body_dims, c.axis_size, c.axis_name)});
  attrs.set("in_dims", dims);
  attrs.set("out_dims", outs_at);
  std::vector<BatchedValue> result;
  for (ValueId v : c.add_multi(Op::pmap, args, attrs)) result.push_back({v, 0});
  return result;
}

}  // namespace graft::ops
