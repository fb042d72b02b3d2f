#include "transforms/vmap.h"
#include "ir/attr_access.h"

#include "graft/errors.h"
#include "ir/passes.h"
#include "ir/inline.h"
#include "transforms/rules/batch_rule.h"

namespace graft::transforms {
namespace {

using ir::Op;

using ir::is_collective;  // from ops.def

// Does the node name this vmap's axis? Then it needs its rule even when no
// operand is batched (psum of an unbatched value, axis_index).
bool names_axis(const ir::Node& n, const std::string& axis_name) {
  if (axis_name.empty() || !is_collective(n.op)) return false;
  return ir::attr<std::string>(n, "axis_name") == axis_name;
}

// Does the node, or any subgraph it carries, name this vmap's axis? A loop
// or call over unbatched values still needs its rule then.
bool mentions_axis(const ir::Node& n, const std::string& axis_name) {
  if (axis_name.empty()) return false;
  if (names_axis(n, axis_name)) return true;
  for (const auto& [name, value] : n.attrs.items())
    if (const ir::Graphs* graphs = std::get_if<ir::Graphs>(&value))
      for (const ir::GraphPtr& g : *graphs)
        for (const ir::Node& m : g->nodes())
          if (mentions_axis(m, axis_name)) return true;
  return false;
}

struct Batcher {
  ir::GraphBuilder b;
  std::vector<BatchedValue> map;  // by value id of the input graph
};

}  // namespace

BatchedGraph batch_graph(const ir::Graph& g, const std::vector<int64_t>& in_dims, int64_t axis_size,
                         const std::string& axis_name) {
  if (in_dims.size() != g.inputs().size())
    throw Error("vmap: " + std::to_string(in_dims.size()) + " batch dims for a graph of " +
                std::to_string(g.inputs().size()) + " inputs");
  Batcher t;
  t.map.assign(g.value_id_bound(), BatchedValue{-1, kNotBatched});
  for (size_t i = 0; i < in_dims.size(); ++i) {
    ir::ValueType type = g.type(g.inputs()[i]);
    if (in_dims[i] != kNotBatched) type.shape.insert(type.shape.begin() + in_dims[i], axis_size);
    t.map[g.inputs()[i]] = BatchedValue{t.b.input(type), in_dims[i]};
  }
  for (const ir::Node& n : g.nodes()) {
    std::vector<BatchedValue> ops;
    bool any = false;
    for (ir::ValueId v : n.inputs) {
      ops.push_back(t.map[v]);
      any = any || t.map[v].dim != kNotBatched;
    }
    if (!any && !mentions_axis(n, axis_name)) {
      std::vector<ir::ValueId> ins;
      for (const BatchedValue& o : ops) ins.push_back(o.value);
      std::vector<ir::ValueId> outs = t.b.add(n.op, std::move(ins), n.attrs, n.loc, n.scope);
      for (size_t k = 0; k < outs.size(); ++k) t.map[n.outputs[k]] = BatchedValue{outs[k], kNotBatched};
      continue;
    }
    BatchRule rule = batch_rule(n.op);
    if (!rule)
      throw UnsupportedError("vmap: " + std::string(ir::op_name(n.op)) + " has no batching rule" +
                             (n.loc.empty() ? "" : " (at " + ir::loc_str(n.loc) + ")"));
    BatchCtx ctx(t.b, n, ops, axis_size, axis_name);
    std::vector<BatchedValue> outs = rule(ctx);
    for (size_t k = 0; k < outs.size(); ++k) t.map[n.outputs[k]] = outs[k];
  }
  BatchedGraph result;
  std::vector<ir::ValueId> outputs;
  for (ir::ValueId v : g.outputs()) {
    outputs.push_back(t.map[v].value);
    result.out_dims.push_back(t.map[v].dim);
  }
  result.graph = std::make_shared<const ir::Graph>(ir::dead_code_elimination(t.b.finish_graph(std::move(outputs))));
  return result;
}

ir::GraphPtr place_batch_axes(const BatchedGraph& bg, const std::vector<int64_t>& want, int64_t axis_size) {
  const ir::Graph& g = *bg.graph;
  ir::GraphBuilder b;
  std::vector<ir::ValueId> ins;
  for (ir::ValueId v : g.inputs()) ins.push_back(b.input(g.type(v)));
  std::vector<ir::ValueId> outs = ir::inline_graph(b, g, ins);
  for (size_t k = 0; k < outs.size(); ++k) {
    const int64_t have = bg.out_dims[k], to = want[k];
    const ir::ValueType t = b.type(outs[k]);
    if (to == kNotBatched) {
      if (have != kNotBatched)
        throw ShapeError("vmap: output " + std::to_string(k) + " (" + ir::type_str(t) +
                         ") varies along the mapped axis, but its out_axes is none");
      continue;
    }
    if (have == kNotBatched) {
      ir::Ints shape(t.shape.begin(), t.shape.end());
      shape.insert(shape.begin() + to, axis_size);
      ir::Ints dims;
      for (int64_t d = 0; d < t.rank() + 1; ++d)
        if (d != to) dims.push_back(d);
      outs[k] = b.add1(Op::broadcast_in_dim, {outs[k]}, {{"shape", shape}, {"broadcast_dimensions", dims}});
    } else if (have != to) {
      ir::Ints perm;
      for (int64_t d = 0; d < t.rank(); ++d)
        if (d != have) perm.push_back(d);
      perm.insert(perm.begin() + to, have);
      outs[k] = b.add1(Op::transpose, {outs[k]}, {{"permutation", perm}});
    }
  }
  return b.finish(std::move(outs));
}

ir::GraphPtr vmap_graph(const ir::Graph& g, const std::vector<int64_t>& in_dims, const std::vector<int64_t>& out_dims,
                        int64_t axis_size, const std::string& axis_name) {
  BatchedGraph bg = batch_graph(g, in_dims, axis_size, axis_name);
  return place_batch_axes(bg, out_dims, axis_size);
}

}  // namespace graft::transforms
