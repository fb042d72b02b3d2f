// The graph IR: SSA values with abstract types, produced by nodes kept in
// topological order. A graph has inputs (parameters), nodes and outputs;
// subgraphs (branches, loop bodies, custom rules) are graphs held in node
// attributes and see nothing of their parent but their own inputs.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/attrs.h"
#include "ir/dim_expr.h"
#include "ir/id_list.h"
#include "ir/op.h"
#include "ir/value.h"

namespace graft::ir {

struct Node {
  int32_t id = 0;
  Op op = Op::add;
  IdList inputs;
  IdList outputs;
  Attrs attrs;
  SourceLoc loc;
  std::string scope;  // named scopes joined by '/', "" at top level

  bool operator==(const Node&) const = default;
};

// A shape-polymorphic graph's symbolic dimensions (ir/symbolic_graph.h):
// the graph itself is the program at one size of its symbols; this says,
// for its top-level values, which of their dimensions are which expression.
// The text and JSON views show them; passes keep them only where they say so.
struct SymbolicDims {
  std::vector<std::string> symbols;
  std::vector<std::string> constraints;            // as the user wrote them ("b >= 8")
  std::map<ValueId, std::vector<DimExpr>> values;  // one expression per dimension
};

class Graph {
 public:
  // ---- building (low level: no checks; GraphBuilder checks and shares nodes)
  ValueId new_value(ValueType type);                 // the next unused id
  void define_value(ValueId id, ValueType type);     // a given id; must be unused
  ValueId add_input(ValueType type);                 // new value as a parameter
  void add_input_id(ValueId id);                     // an already defined value
  Node& add_node(Node node);                         // appended at the end
  void set_outputs(std::vector<ValueId> outputs);
  // Gives a defined value another type (a symbolic graph instantiated at new sizes).
  void set_type(ValueId id, ValueType type);
  // Names of the inputs and outputs for people reading the graph (pytree
  // paths such as "params.w1", from make_graph): empty, or one per input
  // (output). Throws GraphFormatError for a count that does not match.
  void set_names(std::vector<std::string> input_names, std::vector<std::string> output_names);
  const std::vector<std::string>& input_names() const { return input_names_; }
  // Symbolic dimensions (null for a graph of one size). Not part of equality or the hash.
  const std::shared_ptr<const SymbolicDims>& symbolic() const { return symbolic_; }
  void set_symbolic(std::shared_ptr<const SymbolicDims> dims) { symbolic_ = std::move(dims); }
  const std::vector<std::string>& output_names() const { return output_names_; }
  int32_t next_node_id() const { return next_node_id_; }
  // Keeps ids below these bounds from being handed out again, so a pass that
  // drops nodes (DCE) never lets a later node reuse a removed id.
  void reserve_ids(ValueId value_bound, int32_t node_bound);
  void reserve(size_t nodes);  // capacity for about that many nodes and their values
  // Drops the nodes whose flag is false (one flag per node), in place, order kept, and with them
  // every value that neither a graph input nor a kept node defines.
  void keep_nodes(const std::vector<bool>& keep);

  // ---- reading
  const std::vector<ValueId>& inputs() const { return inputs_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  std::vector<Node>& mutable_nodes() { return nodes_; }
  int64_t num_nodes() const { return static_cast<int64_t>(nodes_.size()); }

  bool has_value(ValueId id) const;
  const ValueType& type(ValueId id) const;  // throws GraphFormatError for an unknown id
  std::vector<ValueType> input_types() const;
  std::vector<ValueType> output_types() const;
  ValueId value_id_bound() const { return static_cast<ValueId>(types_.size()); }  // max id + 1

  // Structural equality: same ids, ops, attributes (subgraphs compared
  // structurally, floats bitwise), locations, scopes, inputs and outputs
  // (and their names).
  bool operator==(const Graph& other) const;
  // A hash consistent with operator== (equal graphs hash equal): ops,
  // operand and result ids, attributes (constants by value), input and
  // output ids and types. Linear in the graph and its constants' bytes.
  size_t structural_hash() const;

 private:
  std::vector<ValueId> inputs_;
  std::vector<ValueId> outputs_;
  std::vector<std::string> input_names_, output_names_;
  std::shared_ptr<const SymbolicDims> symbolic_;
  std::vector<Node> nodes_;
  std::vector<ValueType> types_;  // indexed by ValueId
  std::vector<bool> defined_;     // indexed by ValueId
  int32_t next_node_id_ = 0;
};

// Checks a graph against its invariants: every value defined once, every use
// after its definition (topological order), arity, and every node's output
// types against its op's shape/dtype rule, recursing into subgraphs. Throws
// ShapeError / DTypeError (a rule failed) or GraphFormatError (structure).
void verify(const Graph& graph);

}  // namespace graft::ir
