// jit's recomputation pass after fusion; see fusion_recompute.h.
//
// State per fusion node, updated as readers are rewritten (a node rewritten
// as a reader may later be processed as a producer): its current operands
// and outputs (the input graph's value ids) and its current body, whose
// inputs and outputs line up with them.
#include "transforms/fusion_recompute.h"

#include <algorithm>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/attr_access.h"
#include "ir/builder.h"
#include "ir/dtype.h"
#include "ir/passes.h"

namespace graft::transforms {
namespace {

using ir::Op;
using ir::ValueId;

bool recomputable(Op op) {
  return op == Op::constant || op == Op::broadcast_in_dim || ir::op_info(op).family == ir::OpFamily::elementwise;
}

int64_t bytes_of(const ir::ValueType& t) { return t.num_elements() * ir::dtype_size(t.dtype); }

// A fused body's iteration space (fusion.h): the element count of its
// elementwise and layout values and of its reductions' operands. A recipe
// is copied only into a body of its own space (bodies hold no elementwise
// values of another size).
int64_t space_of(const ir::Graph& body) {
  int64_t space = 0;
  for (const ir::Node& node : body.nodes()) {
    if (node.op == Op::constant) continue;
    const ValueId v = ir::is_reduction(node.op) ? node.inputs[0] : node.outputs[0];
    space = std::max(space, body.type(v).num_elements());
  }
  return space;
}

template <class T>
bool contains(const std::vector<T>& v, const T& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Copies `node` into b, its operands through `map` (source value -> b's),
// and records its results there.
void copy_node(ir::GraphBuilder& b, const ir::Node& node, std::unordered_map<ValueId, ValueId>& map) {
  ir::IdList ins;
  for (ValueId u : node.inputs) ins.push_back(map.at(u));
  const ir::IdList outs = b.add(node.op, std::move(ins), node.attrs, node.loc, node.scope);
  for (size_t q = 0; q < outs.size(); ++q) map[node.outputs[q]] = outs[q];
}

// How a body computes one of its outputs from leaves: body nodes in order,
// and the leaves as positions of the body's inputs and of its outputs.
struct Recipe {
  std::vector<size_t> nodes;
  std::vector<size_t> inputs, outputs;
};

class Recomputer {
 public:
  explicit Recomputer(const ir::Graph& g) : g_(g) {
    const size_t n = g.nodes().size();
    inputs_.resize(n);
    outputs_.resize(n);
    bodies_.resize(n);
    readers_.resize(static_cast<size_t>(g.value_id_bound()));
    pinned_.assign(static_cast<size_t>(g.value_id_bound()), false);
    for (ValueId v : g.outputs()) pinned_[v] = true;
    for (size_t i = 0; i < n; ++i) {
      const ir::Node& node = g.nodes()[i];
      for (ValueId v : node.inputs)
        if (!contains(readers_[v], static_cast<int32_t>(i))) readers_[v].push_back(static_cast<int32_t>(i));
      if (node.op != Op::fusion) continue;
      inputs_[i].assign(node.inputs.begin(), node.inputs.end());
      outputs_[i].assign(node.outputs.begin(), node.outputs.end());
      bodies_[i] = ir::attr<ir::Graphs>(node, "body").at(0);
    }
  }

  ir::GraphPtr run(RecomputeStats* stats) {
    for (size_t i = 0; i < g_.nodes().size(); ++i)
      if (bodies_[i]) recompute_outputs_of(i);
    if (stats) *stats = stats_;
    return rebuild();
  }

 private:
  bool is_fusion(int32_t node) const { return bodies_[static_cast<size_t>(node)] != nullptr; }

  // Recipe of output k of node p's current body, stopping at its inputs and
  // at its other outputs that stay (listed in `dropped` are those that go).
  bool trace(size_t p, size_t k, const std::vector<size_t>& dropped, Recipe* recipe) const {
    const ir::Graph& body = *bodies_[p];
    std::unordered_map<ValueId, size_t> input_at, output_at;
    std::unordered_map<ValueId, size_t> producer;
    for (size_t q = 0; q < body.inputs().size(); ++q) input_at.emplace(body.inputs()[q], q);
    for (size_t q = 0; q < body.outputs().size(); ++q)
      if (q != k && !contains(dropped, q)) output_at.emplace(body.outputs()[q], q);
    for (size_t j = 0; j < body.nodes().size(); ++j)
      for (ValueId v : body.nodes()[j].outputs) producer.emplace(v, j);
    std::vector<bool> seen(body.nodes().size(), false);
    int64_t ops = 0;
    // Depth-first, operands before the node that reads them: the recipe is in body order.
    std::vector<std::pair<ValueId, bool>> stack{{body.outputs()[k], false}};
    while (!stack.empty()) {
      auto [v, expanded] = stack.back();
      stack.pop_back();
      if (auto it = input_at.find(v); it != input_at.end()) {
        if (!contains(recipe->inputs, it->second)) recipe->inputs.push_back(it->second);
        continue;
      }
      if (auto it = output_at.find(v); it != output_at.end() && v != body.outputs()[k]) {
        if (!contains(recipe->outputs, it->second)) recipe->outputs.push_back(it->second);
        continue;
      }
      const size_t j = producer.at(v);
      if (expanded) {
        if (!seen[j]) recipe->nodes.push_back(j);
        seen[j] = true;
        continue;
      }
      if (seen[j]) continue;
      const ir::Node& node = body.nodes()[j];
      if (!recomputable(node.op)) return false;
      if (node.op != Op::constant && ++ops > kMaxRecomputedOps) return false;
      stack.emplace_back(v, true);
      for (ValueId u : node.inputs) stack.emplace_back(u, false);
    }
    std::sort(recipe->nodes.begin(), recipe->nodes.end());  // body order is topological
    return true;
  }

  // The input graph's values a recipe of node p reads.
  std::vector<ValueId> leaves(size_t p, const Recipe& recipe) const {
    std::vector<ValueId> out;
    for (size_t q : recipe.inputs) out.push_back(inputs_[p][q]);
    for (size_t q : recipe.outputs) out.push_back(outputs_[p][q]);
    return out;
  }

  void recompute_outputs_of(size_t p) {
    std::vector<size_t> dropped;
    for (size_t k = 0; k < outputs_[p].size(); ++k) {
      const ValueId r = outputs_[p][k];
      if (pinned_[r] || readers_[r].empty()) continue;
      const int64_t elements = g_.type(r).num_elements();
      if (!std::all_of(readers_[r].begin(), readers_[r].end(), [&](int32_t c) {
            return is_fusion(c) && space_of(*bodies_[static_cast<size_t>(c)]) == elements;
          }))
        continue;
      Recipe recipe;
      if (!trace(p, k, dropped, &recipe)) continue;
      const std::vector<ValueId> from = leaves(p, recipe);
      const int64_t bytes = bytes_of(g_.type(r));
      bool cheap = true;
      for (int32_t c : readers_[r]) {
        int64_t more = 0;
        for (ValueId v : from)
          if (!contains(inputs_[static_cast<size_t>(c)], v)) more += bytes_of(g_.type(v));
        cheap = cheap && more <= bytes;
      }
      if (!cheap) continue;
      for (size_t q : recipe.outputs) pinned_[outputs_[p][q]] = true;
      const std::vector<int32_t> readers = readers_[r];
      for (int32_t c : readers) rewrite_reader(static_cast<size_t>(c), r, p, recipe);
      dropped.push_back(k);
      ++stats_.outputs_dropped;
      stats_.bytes_dropped += bytes;
      stats_.ops_copied += static_cast<int64_t>(recipe.nodes.size() * readers.size());
    }
    if (!dropped.empty()) drop_outputs(p, dropped);
  }

  // Node c's body computes r (output `recipe` describes of node p) instead of reading it.
  void rewrite_reader(size_t c, ValueId r, size_t p, const Recipe& recipe) {
    const ir::Graph& old = *bodies_[c];
    const ir::Graph& source = *bodies_[p];
    std::vector<ValueId> inputs;
    for (ValueId v : inputs_[c])
      if (v != r) inputs.push_back(v);
    for (ValueId v : leaves(p, recipe))
      if (!contains(inputs, v)) inputs.push_back(v);
    ir::GraphBuilder b(ir::GraphBuilder::Sharing::none);
    std::unordered_map<ValueId, ValueId> outer;  // the input graph's value -> this body's input
    for (ValueId v : inputs) outer.emplace(v, b.input(g_.type(v)));
    // r from the leaves, the recipe's ops copied.
    std::unordered_map<ValueId, ValueId> in_source;
    for (size_t q : recipe.inputs) in_source.emplace(source.inputs()[q], outer.at(inputs_[p][q]));
    for (size_t q : recipe.outputs) in_source.emplace(source.outputs()[q], outer.at(outputs_[p][q]));
    for (size_t j : recipe.nodes) copy_node(b, source.nodes()[j], in_source);
    const size_t k = static_cast<size_t>(std::find(outputs_[p].begin(), outputs_[p].end(), r) - outputs_[p].begin());
    const ValueId computed = in_source.at(source.outputs()[k]);
    // The old body, its inputs mapped.
    std::unordered_map<ValueId, ValueId> in_old;
    for (size_t q = 0; q < old.inputs().size(); ++q)
      in_old.emplace(old.inputs()[q], inputs_[c][q] == r ? computed : outer.at(inputs_[c][q]));
    for (const ir::Node& node : old.nodes()) copy_node(b, node, in_old);
    std::vector<ValueId> outs;
    for (ValueId v : old.outputs()) outs.push_back(in_old.at(v));
    bodies_[c] = b.finish(std::move(outs));
    // Readers follow the operands.
    auto& of_r = readers_[r];
    of_r.erase(std::remove(of_r.begin(), of_r.end(), static_cast<int32_t>(c)), of_r.end());
    for (ValueId v : inputs)
      if (!contains(readers_[v], static_cast<int32_t>(c))) readers_[v].push_back(static_cast<int32_t>(c));
    inputs_[c] = std::move(inputs);
  }

  // Node p stops returning its outputs at positions `dropped`.
  void drop_outputs(size_t p, const std::vector<size_t>& dropped) {
    const ir::Graph& body = *bodies_[p];
    std::vector<ValueId> keep_body, keep;
    for (size_t q = 0; q < outputs_[p].size(); ++q)
      if (!contains(dropped, q)) keep_body.push_back(body.outputs()[q]), keep.push_back(outputs_[p][q]);
    ir::GraphBuilder b(ir::GraphBuilder::Sharing::none);
    std::unordered_map<ValueId, ValueId> in;
    for (ValueId v : body.inputs()) in.emplace(v, b.input(body.type(v)));
    for (const ir::Node& node : body.nodes()) copy_node(b, node, in);
    std::vector<ValueId> outs;
    for (ValueId v : keep_body) outs.push_back(in.at(v));
    bodies_[p] = std::make_shared<const ir::Graph>(ir::dead_code_elimination(b.finish_graph(std::move(outs))));
    outputs_[p] = std::move(keep);
  }

  ir::GraphPtr rebuild() {
    ir::GraphBuilder b(ir::GraphBuilder::Sharing::none);
    std::vector<ValueId> map(static_cast<size_t>(g_.value_id_bound()), -1);
    for (ValueId v : g_.inputs()) map[v] = b.input(g_.type(v));
    for (size_t i = 0; i < g_.nodes().size(); ++i) {
      const ir::Node& node = g_.nodes()[i];
      if (!bodies_[i]) {
        ir::IdList ins;
        for (ValueId v : node.inputs) ins.push_back(map[v]);
        const ir::IdList outs = b.add(node.op, std::move(ins), node.attrs, node.loc, node.scope);
        for (size_t q = 0; q < outs.size(); ++q) map[node.outputs[q]] = outs[q];
        continue;
      }
      if (outputs_[i].empty()) continue;  // every output recomputed by its readers
      ir::IdList ins;
      for (ValueId v : inputs_[i]) ins.push_back(map[v]);
      const ir::IdList outs =
          b.add(Op::fusion, std::move(ins), {{"body", ir::Graphs{bodies_[i]}}}, node.loc, node.scope);
      for (size_t q = 0; q < outs.size(); ++q) map[outputs_[i][q]] = outs[q];
    }
    std::vector<ValueId> outs;
    for (ValueId v : g_.outputs()) outs.push_back(map[v]);
    // (Scalar constants and broadcasts only recipes read go.)
    return std::make_shared<const ir::Graph>(ir::dead_code_elimination(b.finish_graph(std::move(outs))));
  }

  const ir::Graph& g_;
  std::vector<std::vector<ValueId>> inputs_, outputs_;  // by node: a fusion's current operands and outputs
  std::vector<ir::GraphPtr> bodies_;                    // by node: a fusion's current body, else null
  std::vector<std::vector<int32_t>> readers_;           // by value: the nodes reading it now
  std::vector<bool> pinned_;                            // by value: stays written (a graph output, a leaf)
  RecomputeStats stats_;
};

}  // namespace

ir::GraphPtr recompute_fused_outputs(const ir::Graph& fused, RecomputeStats* stats) {
  return Recomputer(fused).run(stats);
}

}  // namespace graft::transforms
