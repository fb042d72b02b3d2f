// Graphviz DOT of a graph, for looking at it (`dot -Tsvg`): nodes labelled
// with their op, attributes (a constant's value), output types and source
// line; inputs and outputs as ellipses; edges with the value they carry
// (named uniquely, subgraphs' values included); named scopes as nested
// clusters; a node with subgraphs (cond branches, while and scan bodies) in
// a box with them; the backward pass (scope "backward/...") shaded; and any
// scopes asked for collapsed into one box each.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace graft::ir {

struct DotOptions {
  // Scope paths ("mlp/layer1") drawn as one box each, with the number of nodes
  // inside; edges between their nodes are not drawn.
  std::vector<std::string> collapse;
  // Constants, and broadcasts and reshapes, drawn inside the nodes that read
  // them (a constant as a line of its reader's label; a broadcast or reshape
  // of a drawn value as the edge from that value) rather than as boxes.
  bool fold_constants = false;
  // More than 8 inputs (outputs): those sharing a pytree prefix
  // ("params['block3']") drawn as one ellipse per prefix.
  bool group_inputs = false;
  // One edge per pair of drawn boxes, labelled with the number of values it
  // carries when more than one.
  bool bundle_edges = false;
  // More edges than this: their labels become tooltips (Graphviz lays a
  // label out as a node of its own, which makes big pictures slow).
  int64_t max_edge_labels = -1;  // -1: no limit
};

// Draws broken graphs too (cycles, uses out of order, undefined values in
// red), since that is when one most wants to see a graph. Throws
// GraphFormatError only for subgraphs nested absurdly deep.
std::string to_dot(const Graph& g, const DotOptions& options = {});

}  // namespace graft::ir
