// graft::Graph: an immutable handle to a traced dataflow graph, for
// inspection (text, JSON, Graphviz) and interchange (JSON in and out).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace graft {

namespace ir {
class Graph;
}

class Graph {
 public:
  Graph();  // the empty graph: no inputs, no nodes, no outputs
  explicit Graph(std::shared_ptr<const ir::Graph> graph);

  // One line per node, jaxpr-like; nested subgraphs are indented.
  std::string to_text() const;
  // The versioned JSON schema of docs/GRAPH_JSON.md. indent < 0 is compact.
  std::string to_json(int indent = 2) const;
  // Reads what to_json wrote (exactly: ids, attributes, constants bit for bit,
  // subgraphs, locations). Anything malformed throws GraphFormatError naming
  // the problem and its JSON path; a valid-looking graph is also verified.
  static Graph from_json(const std::string& json);
  // Graphviz DOT: one box per node (op, attributes, output types, source
  // line), edges labelled by value, named scopes as clusters, a node with
  // subgraphs boxed with its bodies, the backward pass shaded.
  std::string to_dot() const;
  // The same with each named scope in collapse_scopes ("mlp/layer1",
  // "backward") drawn as one box.
  std::string to_dot(const std::vector<std::string>& collapse_scopes) const;

  int64_t num_nodes() const;  // nodes of the top-level graph
  // Checks order, ids and every node against its op's shape/dtype rule;
  // throws ShapeError, DTypeError or GraphFormatError.
  void verify() const;

  // The internal representation, for graft's own layers.
  const ir::Graph& ir() const { return *graph_; }
  const std::shared_ptr<const ir::Graph>& ir_ptr() const { return graph_; }

 private:
  std::shared_ptr<const ir::Graph> graph_;
};

}  // namespace graft
