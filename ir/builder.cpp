#include "ir/builder.h"

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

std::vector<ValueId> GraphBuilder::add(Op op, std::vector<ValueId> inputs, Attrs attrs, SourceLoc loc,
                                       std::string scope) {
  Key key{op, &inputs, &attrs};
  size_t h = KeyHash{}(key);
  auto [first, last] = by_hash_.equal_range(h);
  for (auto it = first; it != last; ++it) {
    const Node& n = graph_.nodes()[it->second];
    if (KeyEq{}(key, Key{n.op, &n.inputs, &n.attrs})) {
      ++num_shared_;
      return n.outputs;
    }
  }

  std::vector<ValueType> in_types;
  in_types.reserve(inputs.size());
  for (ValueId v : inputs) in_types.push_back(graph_.type(v));
  std::vector<ValueType> out_types = infer_types(op, in_types, attrs, &loc, graph_.next_node_id());

  Node node;
  node.id = graph_.next_node_id();
  node.op = op;
  node.inputs = std::move(inputs);
  node.attrs = std::move(attrs);
  node.loc = std::move(loc);
  node.scope = std::move(scope);
  for (ValueType& t : out_types) node.outputs.push_back(graph_.new_value(std::move(t)));
  by_hash_.emplace(h, graph_.nodes().size());
  return graph_.add_node(std::move(node)).outputs;
}

ValueId GraphBuilder::add1(Op op, std::vector<ValueId> inputs, Attrs attrs, SourceLoc loc, std::string scope) {
  std::vector<ValueId> out = add(op, std::move(inputs), std::move(attrs), std::move(loc), std::move(scope));
  if (out.size() != 1)
    throw Error(std::string(op_name(op)) + ": expected one output, the op has " + std::to_string(out.size()));
  return out[0];
}

GraphPtr GraphBuilder::finish(std::vector<ValueId> outputs) {
  for (ValueId v : outputs) graph_.type(v);  // each output must exist
  graph_.set_outputs(std::move(outputs));
  auto g = std::make_shared<const Graph>(std::move(graph_));
  graph_ = Graph();
  by_hash_.clear();
  num_shared_ = 0;
  return g;
}

}  // namespace graft::ir
