#include "ir/builder.h"

#include "ir/effects.h"

#include <algorithm>

#include "graft/errors.h"
#include "ir/shape_rules/rule.h"

namespace graft::ir {

size_t GraphBuilder::KeyHash::operator()(const Key& k) const {
  size_t h = static_cast<size_t>(k.op) * 0x9e3779b97f4a7c15ull;
  for (ValueId v : *k.inputs) h = (h ^ static_cast<size_t>(v)) * 0x100000001b3ull;
  return h ^ k.attrs->hash();
}

bool GraphBuilder::KeyEq::operator()(const Key& a, const Key& b) const {
  return a.op == b.op && *a.inputs == *b.inputs && *a.attrs == *b.attrs;
}

IdList GraphBuilder::add(Op op, IdList inputs, Attrs attrs, SourceLoc loc, std::string scope) {
  const int32_t node = add_node_index(op, std::move(inputs), std::move(attrs), std::move(loc), std::move(scope));
  return graph_.nodes()[static_cast<size_t>(node)].outputs;
}

int32_t GraphBuilder::add_node_index(Op op, IdList&& inputs, Attrs&& attrs, SourceLoc&& loc,
                                     std::string&& scope) {
  Key key{op, &inputs, &attrs};
  // The table indexes by low bits: mix the high ones in (murmur3's finaliser).
  size_t mixed = KeyHash{}(key);
  mixed ^= mixed >> 33;
  mixed *= 0xff51afd7ed558ccdull;
  mixed ^= mixed >> 33;
  const auto h = static_cast<uint32_t>(mixed ^ (mixed >> 32));
  // Equal nodes are shared (CSE), unless the node has effects (ir/effects.h).
  if (share_ && !table_.empty() && !has_effects(op, attrs)) {
    const size_t mask = table_.size() - 1;
    for (size_t i = h & mask; table_[i].node >= 0; i = (i + 1) & mask) {
      if (table_[i].hash != h) continue;
      const Node& n = graph_.nodes()[static_cast<size_t>(table_[i].node)];
      if (KeyEq{}(key, Key{n.op, &n.inputs, &n.attrs})) {
        ++num_shared_;
        return table_[i].node;
      }
    }
  }

  // The operand types are copied into per-thread scratch whose shapes keep
  // their capacity, so the copies allocate nothing once warm. (Shape rules
  // never build graphs, so this cannot be re-entered while in use.)
  thread_local std::vector<ValueType> in_types;
  in_types.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) in_types[i] = graph_.type(inputs[i]);
  OutTypes out_types = infer_output_types(op, in_types, attrs, &loc, graph_.next_node_id());

  Node node;
  node.id = graph_.next_node_id();
  node.op = op;
  node.inputs = std::move(inputs);
  node.attrs = std::move(attrs);
  node.loc = std::move(loc);
  node.scope = std::move(scope);
  node.outputs.reserve(out_types.size());
  for (ValueType& t : out_types) node.outputs.push_back(graph_.new_value(std::move(t)));
  const auto index = static_cast<int32_t>(graph_.nodes().size());
  if (share_) insert_slot(h, index);
  graph_.add_node(std::move(node));
  return index;
}

void GraphBuilder::reserve(size_t nodes) {
  size_t size = 64;
  while (size < 2 * (nodes + 1)) size *= 2;
  if (size > table_.size()) {
    std::vector<Slot> old = std::move(table_);
    table_.assign(size, Slot{});
    used_ = 0;
    for (const Slot& s : old)
      if (s.node >= 0) insert_slot(s.hash, s.node);
  }
  graph_.reserve(nodes);
}

void GraphBuilder::insert_slot(uint32_t hash, int32_t node) {
  if (2 * (used_ + 1) > table_.size()) {
    std::vector<Slot> old = std::move(table_);
    table_.assign(std::max<size_t>(64, 2 * old.size()), Slot{});
    used_ = 0;
    for (const Slot& s : old)
      if (s.node >= 0) insert_slot(s.hash, s.node);
  }
  const size_t mask = table_.size() - 1;
  size_t i = hash & mask;
  while (table_[i].node >= 0) i = (i + 1) & mask;
  table_[i] = Slot{hash, node};
  ++used_;
}

ValueId GraphBuilder::add1(Op op, IdList inputs, Attrs attrs, SourceLoc loc, std::string scope) {
  // Reads the one output in place: copying the output list would allocate per node.
  const int32_t node = add_node_index(op, std::move(inputs), std::move(attrs), std::move(loc), std::move(scope));
  const IdList& out = graph_.nodes()[static_cast<size_t>(node)].outputs;
  if (out.size() != 1)
    throw Error(std::string(op_name(op)) + ": expected one output, the op has " + std::to_string(out.size()));
  return out[0];
}

GraphPtr GraphBuilder::finish(std::vector<ValueId> outputs) {
  return std::make_shared<const Graph>(finish_graph(std::move(outputs)));
}

Graph GraphBuilder::finish_graph(std::vector<ValueId> outputs) {
  for (ValueId v : outputs) graph_.type(v);  // each output must exist
  graph_.set_outputs(std::move(outputs));
  Graph g = std::move(graph_);
  graph_ = Graph();
  table_.clear();
  used_ = 0;
  num_shared_ = 0;
  return g;
}

}  // namespace graft::ir
