// The verifier: structure (ids, order, arity) and every node's types against
// its op's shape rule, recursing into subgraphs.
#include <string>

#include "graft/errors.h"
#include "ir/graph.h"
#include "ir/shape_rules/rule.h"

namespace graft::ir {
namespace {

constexpr int kMaxSubgraphDepth = 64;

void verify_at(const Graph& g, int depth, const std::string& where);

// A rule failing inside a subgraph names its op; this adds which node and
// attribute of the enclosing graph holds it, keeping the error's class.
void verify_subgraph(const Graph& g, int depth, const std::string& where) {
  try {
    verify_at(g, depth, where);
  } catch (const ShapeError& e) {
    if (std::string(e.what()).starts_with(where)) throw;
    throw ShapeError(where + ": " + e.what());
  } catch (const DTypeError& e) {
    if (std::string(e.what()).starts_with(where)) throw;
    throw DTypeError(where + ": " + e.what());
  }
}

void verify_at(const Graph& g, int depth, const std::string& where) {
  if (depth > kMaxSubgraphDepth)
    throw GraphFormatError(where + ": subgraphs nested deeper than " + std::to_string(kMaxSubgraphDepth));
  auto fail = [&](const std::string& what) { throw GraphFormatError(where + ": " + what); };

  // Values become visible in order: inputs, then each node's outputs.
  std::vector<bool> visible(g.value_id_bound(), false);
  std::vector<bool> seen_input(g.value_id_bound(), false);
  for (ValueId v : g.inputs()) {
    if (!g.has_value(v)) fail("input %" + std::to_string(v) + " is not defined");
    if (seen_input[v]) fail("input %" + std::to_string(v) + " is listed twice");
    seen_input[v] = visible[v] = true;
  }

  for (const Node& n : g.nodes()) {
    std::string node_where = "node " + std::to_string(n.id) + " (" + std::string(op_name(n.op)) + ")";
    std::vector<ValueType> in_types;
    in_types.reserve(n.inputs.size());
    for (ValueId v : n.inputs) {
      if (!g.has_value(v)) fail(node_where + " uses undefined value %" + std::to_string(v));
      if (!visible[v]) fail(node_where + " uses value %" + std::to_string(v) + " before its definition");
      in_types.push_back(g.type(v));
    }
    for (const auto& [name, value] : n.attrs.items())
      if (const Graphs* gs = std::get_if<Graphs>(&value))
        for (size_t i = 0; i < gs->size(); ++i)
          if ((*gs)[i]) verify_subgraph(*(*gs)[i], depth + 1, where + "/" + node_where + "/" + name + "[" + std::to_string(i) + "]");

    std::vector<ValueType> expected = infer_types(n.op, in_types, n.attrs, &n.loc, n.id);
    if (expected.size() != n.outputs.size())
      fail(node_where + " has " + std::to_string(n.outputs.size()) + " outputs, its op makes " +
           std::to_string(expected.size()));
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      ValueId v = n.outputs[i];
      if (!g.has_value(v)) fail(node_where + " output %" + std::to_string(v) + " is not defined");
      if (visible[v]) fail(node_where + " redefines value %" + std::to_string(v));
      if (g.type(v) != expected[i])
        throw ShapeError(where + ": " + node_where + " output %" + std::to_string(v) + " is declared " +
                         type_str(g.type(v)) + " but its op makes " + type_str(expected[i]) +
                         (n.loc.empty() ? "" : " at " + loc_str(n.loc)));
      visible[v] = true;
    }
  }
  for (ValueId v : g.outputs())
    if (!g.has_value(v) || !visible[v]) fail("output %" + std::to_string(v) + " is not defined");
}

}  // namespace

void verify(const Graph& graph) { verify_at(graph, 0, "graph"); }

}  // namespace graft::ir
