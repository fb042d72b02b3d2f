// One Boost adjacency_list holds the vertices of the graph and of every
// subgraph nested in its attributes, so write_graphviz gives each a unique id.
// Values get unique names too: a subgraph's are prefixed by the path of the
// node and attribute holding it ("%7/body/2": value 2 of the body of the node
// whose result is %7), as in the text view.
// Clusters are not something write_graphviz knows; its graph-property writer
// runs at the top of the body and emits them as `subgraph cluster_N` blocks
// that list their member vertices (a vertex belongs to the cluster where it is
// first mentioned).
#include "ir/dot.h"

#include <algorithm>
#include <map>
#include <ostream>
#include <set>
#include <sstream>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/graphviz.hpp>

#include "graft/errors.h"
#include "ir/literal.h"
#include "ir/text.h"

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
  explicit DotBuilder(const DotOptions& options) : options_(options), clusters_(1) {}

  // prefix: how this graph's value names start ("" at the top, "7/body/" in the body of %7's node).
  void add_graph(const Graph& g, size_t cluster, int depth, const std::string& prefix);
  DotGraph& dot() { return dot_; }
  void write_clusters(std::ostream& out) const {
    for (size_t child : clusters_[0].children) write_cluster(out, child, 1);
  }

 private:
  DotVertexId add_vertex(size_t cluster, DotAttrs attrs);
  size_t add_cluster(size_t parent, DotAttrs attrs);
  size_t scope_cluster(size_t cluster, const std::string& scope);
  void write_cluster(std::ostream& out, size_t cluster, int indent) const;

  // The collapsed scope a node's scope falls in ("" if none).
  std::string collapsed_scope(const std::string& scope) const {
    for (const std::string& c : options_.collapse)
      if (!c.empty() && (scope == c || scope.rfind(c + "/", 0) == 0)) return c;
    return {};
  }

  const DotOptions& options_;
  DotGraph dot_;
  std::vector<Cluster> clusters_;
};

// An attribute's value as a label shows it: the text view's form, short (a
// literal's first 4 elements, a scalar without brackets), one line.
std::string short_attr(const AttrValue& value) {
  std::string text = attr_text(value, 4);
  if (const LiteralPtr* lit = std::get_if<LiteralPtr>(&value); lit && *lit && (*lit)->type.rank() == 0 &&
                                                                 text.size() >= 2 && text.front() == '[')
    text = text.substr(1, text.size() - 2);
  if (text.size() > 32) text = text.substr(0, 29) + "...";
  return text;
}

// A node's label: its op and attributes, its output types, its source line.
std::string node_label(const Graph& g, const Node& n) {
  std::string head(op_name(n.op)), attrs;
  for (const auto& [name, value] : n.attrs.items()) {
    if (attr_kind(value) == AttrKind::graphs) continue;
    // An empty list (no batch axes, a scalar broadcast) says nothing the types do not.
    if (const Ints* list = std::get_if<Ints>(&value); list && list->empty()) continue;
    if (n.op == Op::constant && name == "value") {
      head += " " + short_attr(value);  // the value itself, not "value=..."
      continue;
    }
    attrs += (attrs.empty() ? "" : ", ") + name + "=" + short_attr(value);
  }
  // Short attribute lists stay on the op's line; long ones get their own.
  std::string label = head;
  if (!attrs.empty()) label += (head.size() + attrs.size() <= 40 ? " " : "\n") + attrs;
  for (ValueId v : n.outputs) {
    label += '\n';  // appended, not "\n" + std::string: GCC 12 warns falsely on that (-Wrestrict)
    label += g.has_value(v) ? type_str(g.type(v)) : std::string("?");
  }
  if (!n.loc.empty()) {
    std::string where = loc_str(n.loc);
    const size_t slash = where.rfind('/');
    label += "\n" + (slash == std::string::npos ? where : where.substr(slash + 1));
  }
  return label;
}

bool is_backward(const std::string& scope) { return scope == "backward" || scope.rfind("backward/", 0) == 0; }

// The pytree prefix a name shares with its siblings: "params['b3']" of
// "params['b3']['wq']", "out[1]" of "out[1]['w']"; the name itself if none.
std::string pytree_prefix(const std::string& name) {
  const size_t cut = name.find_last_of("[.");
  return cut == std::string::npos || cut == 0 ? name : name.substr(0, cut);
}

// Ops a picture folds into their readers (fold_constants): they only make or
// rearrange values.
bool foldable(Op op) { return op == Op::constant || op == Op::broadcast_in_dim || op == Op::reshape; }

constexpr DotVertexId kNoVertex = ~DotVertexId{0};  // a folded node has no box
constexpr size_t kGroupAbove = 8;                   // group_inputs: more inputs than this

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

void DotBuilder::add_graph(const Graph& g, size_t cluster, int depth, const std::string& prefix) {
  if (depth > kMaxSubgraphDepth)
    throw GraphFormatError("to_dot: subgraphs nested deeper than " + std::to_string(kMaxSubgraphDepth));
  auto type_of = [&](ValueId v) { return g.has_value(v) ? type_str(g.type(v)) : std::string("?"); };
  auto value_name = [&](ValueId v) { return "%" + prefix + std::to_string(v); };
  auto value_label = [&](ValueId v) { return value_name(v) + ": " + type_of(v); };

  // The vertex each value comes from: an input, a node, or (for a broken
  // graph) a placeholder. The first definition wins if a broken graph has two.
  std::unordered_map<ValueId, DotVertexId> source;
  // Inputs and outputs by name where the graph has names (pytree paths from
  // make_graph); many of them grouped by prefix when asked.
  auto groups_of = [&](const std::vector<std::string>& names) {
    std::map<std::string, int64_t> count;
    if (options_.group_inputs && names.size() > kGroupAbove)
      for (const std::string& name : names) ++count[pytree_prefix(name)];
    return count;
  };
  const std::map<std::string, int64_t> input_groups = groups_of(g.input_names());
  std::map<std::string, DotVertexId> input_group_vertex;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const ValueId v = g.inputs()[i];
    if (source.count(v)) continue;
    if (!input_groups.empty()) {
      const std::string prefix = pytree_prefix(g.input_names()[i]);
      if (const int64_t n = input_groups.at(prefix); n > 1) {
        auto it = input_group_vertex.find(prefix);
        if (it == input_group_vertex.end())
          it = input_group_vertex
                   .emplace(prefix, add_vertex(cluster, {{"label", prefix + "\n" + std::to_string(n) + " inputs"},
                                                         {"shape", "ellipse"}}))
                   .first;
        source.emplace(v, it->second);
        continue;
      }
    }
    const std::string label = g.input_names().empty() ? "in " + value_label(v) : g.input_names()[i] + ": " + type_of(v);
    source.emplace(v, add_vertex(cluster, {{"label", label}, {"shape", "ellipse"}}));
  }
  std::set<ValueId> graph_outputs(g.outputs().begin(), g.outputs().end());
  // fold_constants: the text a folded value adds to its readers' labels (a
  // constant, or a broadcast or reshape of one); a broadcast or reshape of a
  // drawn value takes that value's source instead, with its op on the edge.
  std::unordered_map<ValueId, std::string> folded_text, via;
  auto fold = [&](const Node& n) {
    if (!foldable(n.op) || n.outputs.size() != 1 || graph_outputs.count(n.outputs[0])) return false;
    if (n.op != Op::constant && n.inputs.size() != 1) return false;
    const ValueId out = n.outputs[0];
    const std::string op(op_name(n.op));
    if (n.op == Op::constant) {
      for (const auto& [name, value] : n.attrs.items())
        if (name == "value") folded_text[out] = short_attr(value) + ": " + type_of(out);
      return true;
    }
    if (auto text = folded_text.find(n.inputs[0]); text != folded_text.end()) {
      folded_text[out] = op + " of " + text->second.substr(0, text->second.find(':')) + ": " + type_of(out);
      return true;
    }
    if (auto from = source.find(n.inputs[0]); from != source.end()) {
      source.emplace(out, from->second);
      via[out] = op;
      return true;
    }
    return false;  // a broken graph's undefined operand: drawn as it is
  };

  // Nodes in a collapsed scope share one box per scope.
  std::map<std::string, std::pair<DotVertexId, int64_t>> collapsed;  // scope -> (box, nodes in it)
  std::vector<DotVertexId> node_vertex;
  node_vertex.reserve(g.nodes().size());
  for (const Node& n : g.nodes()) {
    const std::string op(op_name(n.op));
    if (const std::string c = collapsed_scope(n.scope); !c.empty()) {
      auto it = collapsed.find(c);
      if (it == collapsed.end()) {
        const size_t slash = c.rfind('/');
        const size_t home = scope_cluster(cluster, slash == std::string::npos ? "" : c.substr(0, slash));
        DotAttrs attrs = {{"label", c}, {"shape", "box3d"}, {"tooltip", "scope " + c + " (collapsed)"}};
        if (is_backward(c)) attrs.insert(attrs.end(), {{"style", "filled"}, {"fillcolor", "#fde0dc"}});
        it = collapsed.emplace(c, std::make_pair(add_vertex(home, std::move(attrs)), 0)).first;
      }
      ++it->second.second;
      node_vertex.push_back(it->second.first);
      for (ValueId v : n.outputs) source.emplace(v, node_vertex.back());
      continue;
    }
    if (options_.fold_constants && fold(n)) {
      node_vertex.push_back(kNoVertex);
      continue;
    }
    std::string tooltip = "node " + std::to_string(n.id);
    if (!n.scope.empty()) tooltip += " in " + n.scope;
    if (!n.loc.empty()) tooltip += " at " + loc_str(n.loc);
    std::string label = node_label(g, n);
    for (ValueId v : n.inputs)
      if (auto text = folded_text.find(v); text != folded_text.end()) label += "\n<- " + text->second;
    DotAttrs attrs = {{"label", label}, {"shape", "box"}, {"tooltip", tooltip}};
    if (is_backward(n.scope)) attrs.insert(attrs.end(), {{"style", "filled"}, {"fillcolor", "#fde0dc"}});

    size_t home = scope_cluster(cluster, n.scope);
    // A node with subgraphs gets a box of its own that holds it and them, so
    // each body is drawn at its node (and two scans' bodies are told apart).
    bool has_subgraphs = false;
    for (const auto& [name, value] : n.attrs.items()) has_subgraphs = has_subgraphs || std::holds_alternative<Graphs>(value);
    if (has_subgraphs)
      home = add_cluster(home, {{"label", n.outputs.empty() ? op + " (node " + std::to_string(n.id) + ")"
                                                            : value_name(n.outputs[0]) + " = " + op},
                                {"tooltip", tooltip},
                                {"style", "rounded"},
                                {"color", "blue"}});
    node_vertex.push_back(add_vertex(home, std::move(attrs)));
    for (ValueId v : n.outputs) source.emplace(v, node_vertex.back());

    for (const auto& [name, value] : n.attrs.items()) {
      const Graphs* subgraphs = std::get_if<Graphs>(&value);
      if (!subgraphs) continue;
      for (size_t i = 0; i < subgraphs->size(); ++i) {
        if (!(*subgraphs)[i]) continue;
        const std::string which = subgraphs->size() > 1 ? name + "[" + std::to_string(i) + "]" : name;
        size_t box = add_cluster(home, {{"label", which},
                                        {"tooltip", "node " + std::to_string(n.id) + " (" + op + ") " + which},
                                        {"style", "rounded,dashed"},
                                        {"color", "blue"}});
        add_graph(*(*subgraphs)[i], box, depth + 1, subgraph_prefix(prefix, n, which));
      }
    }
  }
  for (const auto& [scope, box] : collapsed)
    dot_[box.first].attrs[0].second = scope + "\n" + std::to_string(box.second) + (box.second == 1 ? " node" : " nodes");

  auto source_of = [&](ValueId v) {
    auto it = source.find(v);
    if (it != source.end()) return it->second;
    DotVertexId missing = add_vertex(cluster, {{"label", "undefined " + value_name(v)},
                                               {"shape", "ellipse"},
                                               {"color", "red"},
                                               {"fontcolor", "red"}});
    source.emplace(v, missing);
    return missing;
  };
  // One edge per value and reader (a collapsed box reading a value twice draws it once; inside one, none);
  // bundled: one per pair of boxes.
  std::set<std::pair<ValueId, DotVertexId>> drawn;
  std::map<std::pair<DotVertexId, DotVertexId>, std::vector<std::string>> bundles;
  auto edge = [&](DotVertexId from, DotVertexId to, ValueId v) {
    const std::string label = value_label(v) + (via.count(v) ? " (" + via[v] + ")" : "");
    if (options_.bundle_edges)
      bundles[{from, to}].push_back(label);
    else
      boost::add_edge(from, to, DotEdge{{{"label", label}}}, dot_);
  };
  for (size_t j = 0; j < g.nodes().size(); ++j) {
    if (node_vertex[j] == kNoVertex) continue;
    for (ValueId v : g.nodes()[j].inputs) {
      if (folded_text.count(v)) continue;  // in the reader's label
      const DotVertexId from = source_of(v), to = node_vertex[j];
      if (from == to || !drawn.emplace(v, to).second) continue;
      edge(from, to, v);
    }
  }
  const std::map<std::string, int64_t> output_groups = groups_of(g.output_names());
  std::map<std::string, DotVertexId> output_group_vertex;
  for (size_t k = 0; k < g.outputs().size(); ++k) {
    ValueId v = g.outputs()[k];
    const std::string name = g.output_names().empty() ? "out " + std::to_string(k) : g.output_names()[k];
    DotVertexId out;
    if (const std::string prefix = pytree_prefix(name); !output_groups.empty() && output_groups.at(prefix) > 1) {
      auto it = output_group_vertex.find(prefix);
      if (it == output_group_vertex.end()) {
        const std::string label = prefix + "\n" + std::to_string(output_groups.at(prefix)) + " outputs";
        it = output_group_vertex
                 .emplace(prefix, add_vertex(cluster, {{"label", label}, {"shape", "ellipse"}, {"peripheries", "2"}}))
                 .first;
      }
      out = it->second;
    } else {
      out = add_vertex(cluster, {{"label", name + ": " + type_of(v)}, {"shape", "ellipse"}, {"peripheries", "2"}});
    }
    edge(source_of(v), out, v);
  }
  for (const auto& [ends, labels] : bundles)
    boost::add_edge(ends.first, ends.second,
                    DotEdge{{{"label", labels.size() == 1 ? labels[0] : std::to_string(labels.size()) + " values"},
                             {"tooltip", labels.front() + (labels.size() > 1 ? ", ..." : "")}}},
                    dot_);
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

std::string to_dot(const Graph& g, const DotOptions& options) {
  DotBuilder builder(options);
  builder.add_graph(g, 0, 0, "");
  DotGraph& dot = builder.dot();

  if (options.max_edge_labels >= 0 && static_cast<int64_t>(boost::num_edges(dot)) > options.max_edge_labels) {
    for (auto [e, end] = boost::edges(dot); e != end; ++e) {
      DotAttrs& attrs = dot[*e].attrs;
      const bool has_tooltip =
          std::any_of(attrs.begin(), attrs.end(), [](const auto& a) { return a.first == "tooltip"; });
      for (auto& [key, value] : attrs)
        if (key == "label") key = has_tooltip ? "xlabel_unused" : "tooltip";
      std::erase_if(attrs, [](const auto& a) { return a.first == "xlabel_unused"; });
    }
  }
  std::ostringstream out;
  boost::write_graphviz(
      out, dot, [&](std::ostream& os, DotVertexId v) { write_attr_list(os, dot[v].attrs); },
      [&](std::ostream& os, boost::graph_traits<DotGraph>::edge_descriptor e) { write_attr_list(os, dot[e].attrs); },
      [&](std::ostream& os) {
        os << "newrank=true;\n";  // ranks the whole graph at once: the default ranking fails on some clusters
        builder.write_clusters(os);
      });
  return out.str();
}

}  // namespace graft::ir
