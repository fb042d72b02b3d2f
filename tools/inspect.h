// graft-inspect's subcommands that need more than a line (one file each).
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "graft/graph.h"

namespace graft::inspect {

// ---- scopes (inspect_scopes.cpp)

// The nodes, flops and bytes inside a named scope, its subscopes included.
struct ScopeTotals {
  int64_t nodes = 0;
  double flops = 0, bytes = 0;
  bool per_trip = false;  // holds a while loop, counted for one trip
};
// Every scope path of the top-level graph and each of its ancestors.
std::map<std::string, ScopeTotals> scope_totals(const ir::Graph& g);
// The scope tree, indented, with node counts.
void print_scopes(const Graph& g, std::ostream& out);
// The scopes --collapse patterns name (globs over whole paths, '*' within a
// level), outermost only; throws graft::Error for a pattern matching none.
std::vector<std::string> match_scopes(const ir::Graph& g, const std::vector<std::string>& patterns);
// The deepest level of scopes a picture can expand and stay within `budget`
// shown items: every scope one level deeper is collapsed (`collapse`).
struct BudgetChoice {
  int level = 0;      // scopes of this many levels are drawn open
  int64_t shown = 0;  // the items drawn, about
  std::vector<std::string> collapse;
};
BudgetChoice scopes_within_budget(const ir::Graph& g, int64_t budget);

// ---- the other subcommands

// Time per op kind and per kernel of a trace written by profiler::stop_trace
// (tools/inspect_profile.cpp); throws graft::Error for a file that is not one.
int print_profile(const std::string& path, std::ostream& out);

// Op histogram; flops and bytes as traced (control-flow bodies counted as
// often as they run), split forward/backward and, with by_scope, per scope;
// the planned executable's memory and fused kernels on each backend.
void print_stats(const Graph& g, std::ostream& out, bool by_scope = false);

// Evaluates the graph on .npy inputs (operands: NAME=FILE for each input,
// NAME as input_names() or %ID, or one FILE per input in order), writes
// DIR/out_K.npy and prints a line per output. With cast, an input of
// another dtype is converted; else it is a DTypeError naming it and its file.
int run_graph(const Graph& g, const std::vector<std::string>& operands, const std::string& dir, bool cast,
              std::ostream& out);

// What changed from a to b: inputs and outputs matched by name, nodes by
// what they compute; each difference names the node, its scope and the
// user's line; nodes that differ only because of a change upstream (rewired
// to an added value, retyped by a new batch size) are counted, not listed.
// Returns the number of differences.
int print_diff(const Graph& a, const Graph& b, std::ostream& out);

// One self-contained HTML file: the graph drawn interactively (scopes as
// boxes that expand on a click, a layered layout of what is open, search,
// a node panel, a flops/bytes overlay from ir::node_cost), working offline
// from file:// (tools/html, inspect_html.cpp).
void write_html(const Graph& g, std::ostream& out);

}  // namespace graft::inspect
