// The JSON view of a graph (schema "graft.graph"; see docs/GRAPH_JSON.md).
// Versions: 1, the first; 2 adds the optional "input_names" and
// "output_names" of a graph. Writing gives the newest; reading takes every
// version and upgrades it (each step in json_read.cpp's upgrade()).
#pragma once

#include <string>

#include "ir/graph.h"

namespace graft::ir {

inline constexpr int kJsonVersion = 6;
inline constexpr int kOldestJsonVersion = 1;

// indent < 0 writes compact JSON.
std::string to_json(const Graph& graph, int indent = 2);
// Parses, checks and verifies; anything malformed throws GraphFormatError
// naming the problem and its JSON path (e.g. "$.graph.nodes[3].inputs[1]").
GraphPtr from_json(const std::string& text);
// Attributes alone, in the same encoding as a node's "attrs" object
// ({"axes": {"ints": [0]}, ...}); the transformation corpus uses it.
Attrs attrs_from_json(const std::string& object_text);
// The inverse: attributes as such an object, compact.
std::string attrs_to_json(const Attrs& attrs);

}  // namespace graft::ir
