// One Boost adjacency_list holds the vertices of the graph and of every
// subgraph nested in its attributes, so write_graphviz gives each a unique id.
// Clusters are not something write_graphviz knows; its graph-property writer
// runs at the top of the body and emits them as `subgraph cluster_N` blocks
// that list their member vertices (a vertex belongs to the cluster where it is
// first mentioned).
#include "ir/dot.h"

#include <map>
#include <ostream>
#include <sstream>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/graphviz.hpp>

#include "graft/errors.h"

namespace graft::ir {
namespace {

constexpr int kMaxSubgraphDepth = 64;

// DOT attributes, name -> unquoted value.
using DotAttrs = std::vector<std::pair<std::string, std::string>>;

struct DotVertex {
  DotAttrs attrs;
};
struct DotEdge {
  DotAttrs attrs;
};
// bidirectionalS for its edge list: with directedS, GCC 12 warns (falsely) of
// an uninitialised edge iterator inside write_graphviz.
using DotGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, DotVertex, DotEdge>;
using DotVertexId = boost::graph_traits<DotGraph>::vertex_descriptor;

// A box around vertices: a named scope or a subgraph attribute. Cluster 0 is
// the top level, drawn without a box.
struct Cluster {
  DotAttrs attrs;
  std::vector<DotVertexId> members;
  std::vector<size_t> children;
  std::map<std::string, size_t> scope_children;  // by scope name, so a scope gets one box
};

// A DOT string literal. Labels keep '\n' as DOT's line break; other control
// characters would end up verbatim in the file, so they become spaces.
std::string dot_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out + '"';
}

void write_attr_list(std::ostream& out, const DotAttrs& attrs) {
  out << " [";
  for (size_t i = 0; i < attrs.size(); ++i) out << (i ? ", " : "") << attrs[i].first << "=" << dot_string(attrs[i].second);
  out << "]";
}

class DotBuilder {
 public:
  DotBuilder() : clusters_(1) {}

  void add_graph(const Graph& g, size_t cluster, int depth);
  const DotGraph& dot() const { return dot_; }
  void write_clusters(std::ostream& out) const {
    for (size_t child : clusters_[0].children) write_cluster(out, child, 1);
  }

 private:
  DotVertexId add_vertex(size_t cluster, DotAttrs attrs);
  size_t add_cluster(size_t parent, DotAttrs attrs);
  size_t scope_cluster(size_t cluster, const std::string& scope);
  void write_cluster(std::ostream& out, size_t cluster, int indent) const;

  DotGraph dot_;
  std::vector<Cluster> clusters_;
};

DotVertexId DotBuilder::add_vertex(size_t cluster, DotAttrs attrs) {
  // Assigned after adding: add_vertex(property, g) trips a false GCC
  // -Wuninitialized inside Boost's named_graph under sanitizer builds.
  DotVertexId v = boost::add_vertex(dot_);
  dot_[v].attrs = std::move(attrs);
  clusters_[cluster].members.push_back(v);
  return v;
}

size_t DotBuilder::add_cluster(size_t parent, DotAttrs attrs) {
  clusters_.push_back(Cluster{std::move(attrs), {}, {}, {}});
  size_t c = clusters_.size() - 1;
  clusters_[parent].children.push_back(c);
  return c;
}

// The box of a scope path such as "mlp/layer1" inside `cluster`, one nested
// box per level; empty components ("a//b") are skipped.
size_t DotBuilder::scope_cluster(size_t cluster, const std::string& scope) {
  size_t begin = 0;
  while (begin <= scope.size()) {
    size_t end = scope.find('/', begin);
    if (end == std::string::npos) end = scope.size();
    std::string name = scope.substr(begin, end - begin);
    begin = end + 1;
    if (name.empty()) continue;
    auto it = clusters_[cluster].scope_children.find(name);
    if (it != clusters_[cluster].scope_children.end()) {
      cluster = it->second;
    } else {
      size_t child = add_cluster(cluster, {{"label", name}, {"style", "dashed"}});
      clusters_[cluster].scope_children.emplace(name, child);
      cluster = child;
    }
  }
  return cluster;
}

void DotBuilder::add_graph(const Graph& g, size_t cluster, int depth) {
  if (depth > kMaxSubgraphDepth)
    throw GraphFormatError("to_dot: subgraphs nested deeper than " + std::to_string(kMaxSubgraphDepth));
  auto type_of = [&](ValueId v) { return g.has_value(v) ? type_str(g.type(v)) : std::string("?"); };
  auto value_label = [&](ValueId v) { return "%" + std::to_string(v) + ": " + type_of(v); };

  // The vertex each value comes from: an input, a node, or (for a broken
  // graph) a placeholder. The first definition wins if a broken graph has two.
  std::unordered_map<ValueId, DotVertexId> source;
  for (ValueId v : g.inputs())
    if (!source.count(v)) source.emplace(v, add_vertex(cluster, {{"label", "in " + value_label(v)}, {"shape", "ellipse"}}));

  std::vector<DotVertexId> node_vertex;
  node_vertex.reserve(g.nodes().size());
  for (const Node& n : g.nodes()) {
    std::string op(op_name(n.op));
    std::string label = op;
    for (ValueId v : n.outputs) label += "\n" + type_of(v);
    std::string tooltip = "node " + std::to_string(n.id);
    if (!n.scope.empty()) tooltip += " in " + n.scope;
    if (!n.loc.empty()) tooltip += " at " + loc_str(n.loc);

    size_t home = scope_cluster(cluster, n.scope);
    node_vertex.push_back(add_vertex(home, {{"label", label}, {"shape", "box"}, {"tooltip", tooltip}}));
    for (ValueId v : n.outputs) source.emplace(v, node_vertex.back());

    for (const auto& [name, value] : n.attrs.items()) {
      const Graphs* subgraphs = std::get_if<Graphs>(&value);
      if (!subgraphs) continue;
      for (size_t i = 0; i < subgraphs->size(); ++i) {
        if (!(*subgraphs)[i]) continue;
        std::string which = name + "[" + std::to_string(i) + "]";
        size_t box = add_cluster(home, {{"label", op + " " + which},
                                        {"tooltip", "node " + std::to_string(n.id) + " (" + op + ") " + which},
                                        {"style", "rounded"},
                                        {"color", "blue"}});
        add_graph(*(*subgraphs)[i], box, depth + 1);
      }
    }
  }

  auto source_of = [&](ValueId v) {
    auto it = source.find(v);
    if (it != source.end()) return it->second;
    DotVertexId missing = add_vertex(
        cluster, {{"label", "undefined %" + std::to_string(v)}, {"shape", "ellipse"}, {"color", "red"}, {"fontcolor", "red"}});
    source.emplace(v, missing);
    return missing;
  };
  for (size_t j = 0; j < g.nodes().size(); ++j)
    for (ValueId v : g.nodes()[j].inputs)
      boost::add_edge(source_of(v), node_vertex[j], DotEdge{{{"label", value_label(v)}}}, dot_);
  for (size_t k = 0; k < g.outputs().size(); ++k) {
    ValueId v = g.outputs()[k];
    DotVertexId out = add_vertex(
        cluster, {{"label", "out " + std::to_string(k) + ": " + type_of(v)}, {"shape", "ellipse"}, {"peripheries", "2"}});
    boost::add_edge(source_of(v), out, DotEdge{{{"label", value_label(v)}}}, dot_);
  }
}

void DotBuilder::write_cluster(std::ostream& out, size_t cluster, int indent) const {
  const Cluster& c = clusters_[cluster];
  std::string pad(2 * static_cast<size_t>(indent), ' ');
  out << pad << "subgraph cluster_" << cluster << " {\n";
  for (const auto& [key, value] : c.attrs) out << pad << "  " << key << "=" << dot_string(value) << ";\n";
  for (DotVertexId v : c.members) out << pad << "  " << v << ";\n";
  for (size_t child : c.children) write_cluster(out, child, indent + 1);
  out << pad << "}\n";
}

}  // namespace

std::string to_dot(const Graph& g) {
  DotBuilder builder;
  builder.add_graph(g, 0, 0);
  const DotGraph& dot = builder.dot();

  std::ostringstream out;
  boost::write_graphviz(
      out, dot, [&](std::ostream& os, DotVertexId v) { write_attr_list(os, dot[v].attrs); },
      [&](std::ostream& os, boost::graph_traits<DotGraph>::edge_descriptor e) { write_attr_list(os, dot[e].attrs); },
      [&](std::ostream& os) { builder.write_clusters(os); });
  return out.str();
}

}  // namespace graft::ir
