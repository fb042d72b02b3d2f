// The jaxpr-like text view of a graph: one line per node, subgraphs indented.
#pragma once

#include <string>

#include "ir/graph.h"

namespace graft::ir {

std::string to_text(const Graph& graph);
// The same, for a person reading an exported graph: the inputs one per line
// with their names (pytree paths), each node's source line after its scope,
// and the outputs with their names.
std::string to_text_with_names(const Graph& graph);
// An attribute's value as the text view writes it: 3, (0,1), 0.5, f32,
// 'name', [1, 2, ...] (a literal's first literal_limit elements); "" for
// subgraphs, which are printed below their node.
std::string attr_text(const AttrValue& value, int64_t literal_limit = 8);
// How the values of subgraph `which` ("body", "branches[1]") of node n are
// named after the prefix of the graph holding n: by n's first result, so the
// body of "%4 = scan ..." holds %4/body/0, %4/body/1, ... (unique across the
// whole printed graph; the text view and the Graphviz picture agree).
std::string subgraph_prefix(const std::string& prefix, const Node& n, const std::string& which);
// One node's line (and its subgraphs, indented below it), as to_text prints it.
std::string node_text(const Graph& graph, const Node& node);

}  // namespace graft::ir
