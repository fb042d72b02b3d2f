// GraphBuilder: appends nodes in order, infers their output types with the
// op's shape rule (so a built graph is valid by construction), and shares
// identical nodes (same op, operands and attributes) instead of repeating them.
// Every graft primitive is a pure function of its operands and attributes,
// so sharing never changes a result.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "ir/graph.h"

namespace graft::ir {

class GraphBuilder {
 public:
  // Whether equal nodes are shared. Passes that run after CSE and copy nodes
  // kept apart on purpose (the recomputation a checkpoint put in the
  // backward pass, jit's remat inlining) build without it.
  enum class Sharing { equal_nodes, none };
  explicit GraphBuilder(Sharing sharing = Sharing::equal_nodes) : share_(sharing == Sharing::equal_nodes) {}

  ValueId input(ValueType type) { return graph_.add_input(std::move(type)); }

  // Appends (or finds) a node; returns its output values.
  IdList add(Op op, IdList inputs, Attrs attrs = {}, SourceLoc loc = {}, std::string scope = {});
  // For single-output ops.
  ValueId add1(Op op, IdList inputs, Attrs attrs = {}, SourceLoc loc = {}, std::string scope = {});

  // Room for about `nodes` nodes without regrowing (a pass rebuilding a graph knows its size).
  void reserve(size_t nodes);

  // Valid until the next add: adding values may move the table; copy to keep.
  const ValueType& type(ValueId id) const { return graph_.type(id); }
  const Graph& graph() const { return graph_; }
  int64_t num_shared() const { return num_shared_; }  // nodes not added because an identical one existed

  // The finished graph; the builder is left empty.
  GraphPtr finish(std::vector<ValueId> outputs);
  // The same, by value (to hand to a pass that consumes it).
  Graph finish_graph(std::vector<ValueId> outputs);

 private:
  struct Key {
    Op op;
    const IdList* inputs;
    const Attrs* attrs;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  struct KeyEq {
    bool operator()(const Key& a, const Key& b) const;
  };

  // An open-addressing table of (key hash, node index), linear probing, at
  // most half full: one cache line per lookup in the common case, where a
  // node-based hash map costs several misses on graphs of 100k nodes.
  // A slot is 8 bytes (a 32-bit hash, which also places it, and the node),
  // so the table of a 200k-node graph stays a few MB.
  struct Slot {
    uint32_t hash = 0;
    int32_t node = -1;  // -1: empty
  };
  void insert_slot(uint32_t hash, int32_t node);
  // add's work: the index of the new (or shared) node.
  int32_t add_node_index(Op op, IdList&& inputs, Attrs&& attrs, SourceLoc&& loc, std::string&& scope);

  Graph graph_;
  // Keys point into graph_'s nodes; indices stay valid as nodes are appended,
  // so the table stores node indices and rebuilds keys from them.
  std::vector<Slot> table_;
  size_t used_ = 0;
  int64_t num_shared_ = 0;
  bool share_ = true;
};

}  // namespace graft::ir
