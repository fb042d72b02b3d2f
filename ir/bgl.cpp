#include "ir/bgl.h"

#include "ir/effects.h"

#include <algorithm>

#include <iterator>
#include <optional>
#include <string>
#include <utility>

#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/depth_first_search.hpp>
#include <boost/graph/reverse_graph.hpp>
#include <boost/graph/topological_sort.hpp>
#include <boost/pending/queue.hpp>
#include <boost/property_map/property_map.hpp>

#include "graft/errors.h"

namespace graft::ir {
namespace {

std::string node_name(const Node& n) {
  return "node " + std::to_string(n.id) + " (" + std::string(op_name(n.op)) + ")";
}

std::string value_name(ValueId v) { return "%" + std::to_string(v); }

// Vertices reached from any source, sources included; works on the view and on
// its reverse alike.
template <class BglGraph>
std::vector<bool> reached_from(const BglGraph& g, const std::vector<DataflowVertex>& sources) {
  std::vector<boost::default_color_type> color(boost::num_vertices(g));
  auto color_map = boost::make_iterator_property_map(color.begin(), boost::get(boost::vertex_index, g));
  boost::queue<DataflowVertex> queue;
  boost::breadth_first_search(g, sources.begin(), sources.end(), queue, boost::default_bfs_visitor(), color_map);
  std::vector<bool> reached(color.size());
  for (size_t i = 0; i < color.size(); ++i) reached[i] = color[i] != boost::white_color;
  return reached;
}

// Remembers the DFS tree and the first back edge; the back edge closes a
// cycle whose other vertices are the tree path from its target to its source.
class BackEdgeFinder : public boost::default_dfs_visitor {
 public:
  using Edge = boost::graph_traits<DataflowGraph>::edge_descriptor;

  BackEdgeFinder(std::vector<DataflowVertex>& parent, std::optional<Edge>& back)
      : parent_(&parent), back_(&back) {}

  void tree_edge(Edge e, const DataflowGraph& g) { (*parent_)[boost::target(e, g)] = boost::source(e, g); }
  void back_edge(Edge e, const DataflowGraph&) {
    if (!*back_) *back_ = e;
  }

 private:
  std::vector<DataflowVertex>* parent_;
  std::optional<Edge>* back_;
};

// topological_sort only says "not a DAG"; a second DFS finds which nodes, so
// the message can point at them.
std::string describe_cycle(const Graph& g, const DataflowView& view) {
  std::vector<DataflowVertex> parent(boost::num_vertices(view.graph));
  std::optional<BackEdgeFinder::Edge> back;
  boost::depth_first_search(view.graph, boost::visitor(BackEdgeFinder(parent, back)));
  if (!back) return "graph has a cycle";  // unreachable: topological_sort saw one

  DataflowVertex first = boost::target(*back, view.graph);
  std::vector<DataflowVertex> cycle{boost::source(*back, view.graph)};
  while (cycle.back() != first) cycle.push_back(parent[cycle.back()]);

  constexpr size_t kMaxNamed = 16;  // a cycle through thousands of nodes would drown the message
  std::string msg = "graph has a cycle through ";
  for (size_t k = 0; k < cycle.size() && k < kMaxNamed; ++k)
    msg += node_name(g.nodes()[cycle[cycle.size() - 1 - k]]) + " -> ";
  if (cycle.size() > kMaxNamed) msg += "... (" + std::to_string(cycle.size() - kMaxNamed) + " more) -> ";
  return msg + "node " + std::to_string(g.nodes()[first].id);
}

}  // namespace

DataflowView dataflow_view(const Graph& g) {
  const std::vector<Node>& nodes = g.nodes();
  const size_t bound = static_cast<size_t>(g.value_id_bound());
  DataflowView view;
  view.graph = DataflowGraph(nodes.size());
  view.producer.assign(bound, DataflowView::kNoProducer);

  std::vector<bool> is_input(bound, false);
  for (ValueId v : g.inputs())
    if (g.has_value(v)) is_input[v] = true;

  for (size_t i = 0; i < nodes.size(); ++i) {
    for (ValueId v : nodes[i].outputs) {
      if (!g.has_value(v))
        throw GraphFormatError(node_name(nodes[i]) + " defines value " + value_name(v) + ", which has no type");
      if (is_input[v])
        throw GraphFormatError("value " + value_name(v) + " is a graph input and also defined by " +
                               node_name(nodes[i]));
      if (view.producer[v] != DataflowView::kNoProducer)
        throw GraphFormatError("value " + value_name(v) + " is defined by both " +
                               node_name(nodes[view.producer[v]]) + " and " + node_name(nodes[i]));
      view.producer[v] = static_cast<int64_t>(i);
    }
  }

  auto is_defined = [&](ValueId v) {
    return g.has_value(v) && (is_input[v] || view.producer[v] != DataflowView::kNoProducer);
  };
  for (size_t j = 0; j < nodes.size(); ++j) {
    for (size_t k = 0; k < nodes[j].inputs.size(); ++k) {
      ValueId v = nodes[j].inputs[k];
      if (!is_defined(v)) throw GraphFormatError(node_name(nodes[j]) + " uses undefined value " + value_name(v));
      if (int64_t p = view.producer[v]; p != DataflowView::kNoProducer)
        boost::add_edge(static_cast<DataflowVertex>(p), j, DataflowEdge{v, k}, view.graph);
    }
  }
  for (ValueId v : g.outputs())
    if (!is_defined(v)) throw GraphFormatError("graph output uses undefined value " + value_name(v));
  return view;
}

void topo_sort(Graph& g) {
  DataflowView view = dataflow_view(g);
  // On the reversed view a node finishes right after the producers of its
  // operands, so the finish order is a topological order of the graph; as the
  // DFS starts from nodes in their current order, a sorted graph stays as it is.
  std::vector<DataflowVertex> order;
  order.reserve(boost::num_vertices(view.graph));
  auto operands_first = boost::make_reverse_graph(view.graph);
  try {
    boost::topological_sort(operands_first, std::back_inserter(order));
  } catch (const boost::not_a_dag&) {
    throw GraphFormatError(describe_cycle(g, view));
  }

  std::vector<Node>& nodes = g.mutable_nodes();
  std::vector<Node> sorted;
  sorted.reserve(nodes.size());
  for (DataflowVertex v : order) sorted.push_back(std::move(nodes[v]));
  nodes = std::move(sorted);
}

Graph dead_code_elimination(const Graph& g) { return dead_code_elimination(Graph(g)); }

namespace {

// Marks every value an input or a node defines; false when the graph is
// not well formed and in order (see in_topological_order).
bool defined_in_order(const Graph& g, std::vector<uint8_t>& flag) {
  const ValueId bound = g.value_id_bound();
  flag.assign(static_cast<size_t>(bound), 0);
  auto fresh = [&](ValueId v) { return v >= 0 && v < bound && g.has_value(v) && !flag[static_cast<size_t>(v)]; };
  for (ValueId v : g.inputs()) {
    if (!fresh(v)) return false;
    flag[static_cast<size_t>(v)] = 1;
  }
  for (const Node& n : g.nodes()) {
    for (ValueId v : n.inputs)
      if (v < 0 || v >= bound || !flag[static_cast<size_t>(v)]) return false;
    for (ValueId v : n.outputs) {
      if (!fresh(v)) return false;
      flag[static_cast<size_t>(v)] = 1;
    }
  }
  for (ValueId v : g.outputs())
    if (v < 0 || v >= bound || !flag[static_cast<size_t>(v)]) return false;
  return true;
}

// Live nodes of a well-formed graph whose nodes are in topological order
// (every operand defined before its use, every value defined once): one
// backward sweep over value flags, no adjacency lists. Nothing when the
// graph is not such a graph; the general path then finds (or reports) its shape.
std::optional<std::vector<bool>> live_nodes_in_order(const Graph& g, bool keep_effects) {
  const std::vector<Node>& nodes = g.nodes();
  std::vector<uint8_t> flag;
  if (!defined_in_order(g, flag)) return std::nullopt;
  // Now flag means "some output needs this value".
  std::fill(flag.begin(), flag.end(), 0);
  for (ValueId v : g.outputs()) flag[static_cast<size_t>(v)] = 1;
  std::vector<bool> live(nodes.size(), false);
  for (size_t i = nodes.size(); i-- > 0;) {
    live[i] = keep_effects && has_effects(nodes[i]);
    for (ValueId v : nodes[i].outputs) live[i] = live[i] || flag[static_cast<size_t>(v)];
    if (live[i])
      for (ValueId v : nodes[i].inputs) flag[static_cast<size_t>(v)] = 1;
  }
  return live;
}

}  // namespace

bool in_topological_order(const Graph& g) {
  std::vector<uint8_t> flag;
  return defined_in_order(g, flag);
}

namespace {

Graph eliminate(Graph&& g, bool keep_effects) {
  // Live nodes are those some output depends on.
  std::optional<std::vector<bool>> in_order = live_nodes_in_order(g, keep_effects);
  std::vector<bool> live;
  if (in_order) {
    live = std::move(*in_order);
  } else {
    // Not in order (or malformed): reachable backwards from the outputs' producers.
    DataflowView view = dataflow_view(g);
    std::vector<DataflowVertex> output_producers;
    for (ValueId v : g.outputs())
      if (int64_t p = view.producer_of(v); p != DataflowView::kNoProducer)
        output_producers.push_back(static_cast<DataflowVertex>(p));
    for (size_t i = 0; i < g.nodes().size(); ++i)  // an op with effects lives whether used or not
      if (keep_effects && has_effects(g.nodes()[i])) output_producers.push_back(static_cast<DataflowVertex>(i));
    live = reached_from(boost::make_reverse_graph(view.graph), output_producers);
  }
  if (std::find(live.begin(), live.end(), false) == live.end()) return std::move(g);  // nothing to drop

  // Compacted in place: no node, type or vector is copied.
  g.keep_nodes(live);
  return std::move(g);
}

}  // namespace

Graph dead_code_elimination(Graph&& g) { return eliminate(std::move(g), true); }
Graph recomputation_dce(Graph&& g) { return eliminate(std::move(g), false); }

std::vector<bool> reachable_from(const DataflowView& view, const std::vector<size_t>& start_nodes) {
  const size_t num_nodes = boost::num_vertices(view.graph);
  for (size_t s : start_nodes)
    if (s >= num_nodes)
      throw Error("reachable_from: start node index " + std::to_string(s) + " is out of range for a graph of " +
                  std::to_string(num_nodes) + " nodes");
  return reached_from(view.graph, std::vector<DataflowVertex>(start_nodes.begin(), start_nodes.end()));
}

std::vector<bool> reachable_from(const Graph& g, const std::vector<size_t>& start_nodes) {
  return reachable_from(dataflow_view(g), start_nodes);
}

}  // namespace graft::ir
