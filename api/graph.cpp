// graft::Graph: the public handle over ir::Graph.
#include "graft/graph.h"

#include "ir/dot.h"
#include "ir/graph.h"
#include "ir/json.h"
#include "ir/text.h"

namespace graft {

Graph::Graph() : graph_(std::make_shared<const ir::Graph>()) {}
Graph::Graph(std::shared_ptr<const ir::Graph> graph) : graph_(graph ? std::move(graph) : std::make_shared<const ir::Graph>()) {}

std::string Graph::to_text() const { return ir::to_text(*graph_); }
std::string Graph::to_json(int indent) const { return ir::to_json(*graph_, indent); }
Graph Graph::from_json(const std::string& json) { return Graph(ir::from_json(json)); }
std::string Graph::to_dot() const { return ir::to_dot(*graph_); }
std::string Graph::to_dot(const std::vector<std::string>& collapse_scopes) const {
  return ir::to_dot(*graph_, ir::DotOptions{collapse_scopes});
}
int64_t Graph::num_nodes() const { return graph_->num_nodes(); }
void Graph::verify() const { ir::verify(*graph_); }

}  // namespace graft
