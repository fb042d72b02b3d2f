#include "ir/graph.h"

#include <algorithm>

#include "graft/errors.h"

namespace graft::ir {

ValueId Graph::new_value(ValueType type) {
  ValueId id = value_id_bound();
  define_value(id, std::move(type));
  return id;
}

void Graph::define_value(ValueId id, ValueType type) {
  if (id < 0) throw GraphFormatError("value id " + std::to_string(id) + " is negative");
  if (static_cast<size_t>(id) >= types_.size()) {
    types_.resize(static_cast<size_t>(id) + 1);
    defined_.resize(static_cast<size_t>(id) + 1, false);
  }
  if (defined_[id]) throw GraphFormatError("value %" + std::to_string(id) + " is defined twice");
  types_[id] = std::move(type);
  defined_[id] = true;
}

ValueId Graph::add_input(ValueType type) {
  ValueId id = new_value(std::move(type));
  add_input_id(id);
  return id;
}

void Graph::add_input_id(ValueId id) {
  inputs_.push_back(id);
  if (!input_names_.empty()) input_names_.emplace_back();  // named inputs stay one name each
}

void Graph::set_type(ValueId id, ValueType type) {
  if (!has_value(id)) throw GraphFormatError("value %" + std::to_string(id) + " is not defined");
  types_[id] = std::move(type);
}

void Graph::set_outputs(std::vector<ValueId> outputs) {
  if (outputs.size() != outputs_.size()) output_names_.clear();  // other results: the names no longer fit
  outputs_ = std::move(outputs);
}

void Graph::set_names(std::vector<std::string> input_names, std::vector<std::string> output_names) {
  if (!input_names.empty() && input_names.size() != inputs_.size())
    throw GraphFormatError(std::to_string(input_names.size()) + " input names for " + std::to_string(inputs_.size()) +
                           " inputs");
  if (!output_names.empty() && output_names.size() != outputs_.size())
    throw GraphFormatError(std::to_string(output_names.size()) + " output names for " +
                           std::to_string(outputs_.size()) + " outputs");
  input_names_ = std::move(input_names);
  output_names_ = std::move(output_names);
}

Node& Graph::add_node(Node node) {
  if (node.id >= next_node_id_) next_node_id_ = node.id + 1;
  nodes_.push_back(std::move(node));
  return nodes_.back();
}

void Graph::reserve_ids(ValueId value_bound, int32_t node_bound) {
  if (value_bound > value_id_bound()) {
    types_.resize(static_cast<size_t>(value_bound));
    defined_.resize(static_cast<size_t>(value_bound), false);
  }
  next_node_id_ = std::max(next_node_id_, node_bound);
}

void Graph::reserve(size_t nodes) {
  nodes_.reserve(nodes);
  types_.reserve(nodes + inputs_.size());  // most nodes define one value
  defined_.reserve(nodes + inputs_.size());
}

void Graph::keep_nodes(const std::vector<bool>& keep) {
  if (keep.size() != nodes_.size())
    throw Error("keep_nodes: " + std::to_string(keep.size()) + " flags for " + std::to_string(nodes_.size()) + " nodes");
  std::vector<bool> defined(defined_.size(), false);
  for (ValueId v : inputs_)
    if (has_value(v)) defined[v] = true;
  size_t kept = 0;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (!keep[i]) continue;
    for (ValueId v : nodes_[i].outputs)
      if (has_value(v)) defined[v] = true;
    if (kept != i) nodes_[kept] = std::move(nodes_[i]);
    ++kept;
  }
  nodes_.resize(kept);
  for (size_t v = 0; v < defined_.size(); ++v)
    if (defined_[v] && !defined[v]) types_[v] = ValueType{};
  defined_ = std::move(defined);
}

bool Graph::has_value(ValueId id) const {
  return id >= 0 && static_cast<size_t>(id) < defined_.size() && defined_[id];
}

const ValueType& Graph::type(ValueId id) const {
  if (!has_value(id)) throw GraphFormatError("value %" + std::to_string(id) + " is not defined");
  return types_[id];
}

std::vector<ValueType> Graph::input_types() const {
  std::vector<ValueType> out;
  out.reserve(inputs_.size());
  for (ValueId id : inputs_) out.push_back(type(id));
  return out;
}

std::vector<ValueType> Graph::output_types() const {
  std::vector<ValueType> out;
  out.reserve(outputs_.size());
  for (ValueId id : outputs_) out.push_back(type(id));
  return out;
}

size_t Graph::structural_hash() const {
  auto mix = [](size_t seed, size_t v) { return seed ^ (v + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2)); };
  size_t h = mix(inputs_.size(), nodes_.size());
  auto add_type = [&](ValueId id) {
    const ValueType& t = types_[static_cast<size_t>(id)];
    h = mix(h, static_cast<size_t>(t.dtype));
    for (int64_t d : t.shape) h = mix(h, static_cast<size_t>(d));
  };
  for (ValueId id : inputs_) {
    h = mix(h, static_cast<size_t>(id));
    add_type(id);
  }
  for (const Node& n : nodes_) {
    h = mix(h, static_cast<size_t>(n.op));
    for (ValueId id : n.inputs) h = mix(h, static_cast<size_t>(id));
    for (ValueId id : n.outputs) h = mix(h, static_cast<size_t>(id));
    h = mix(h, n.attrs.hash());
  }
  for (ValueId id : outputs_) h = mix(h, static_cast<size_t>(id));
  return h;
}

bool Graph::operator==(const Graph& other) const {
  if (inputs_ != other.inputs_ || outputs_ != other.outputs_ || nodes_ != other.nodes_) return false;
  if (input_names_ != other.input_names_ || output_names_ != other.output_names_) return false;
  // Only defined values matter; trailing unused capacity does not.
  ValueId bound = std::max(value_id_bound(), other.value_id_bound());
  for (ValueId id = 0; id < bound; ++id) {
    if (has_value(id) != other.has_value(id)) return false;
    if (has_value(id) && types_[id] != other.types_[id]) return false;
  }
  return true;
}

}  // namespace graft::ir
