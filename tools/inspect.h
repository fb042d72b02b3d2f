// graft-inspect's subcommands that need more than a line (one file each).
#pragma once

#include <ostream>

#include "graft/graph.h"

namespace graft::inspect {

// Op histogram, flops and bytes, the planned executable's memory and the
// fused kernel count on each backend.
void print_stats(const Graph& g, std::ostream& out);

// The nodes of b that a lacks (added), those of a that b lacks (removed) and
// those in both with the same operands but other attributes or types
// (changed); nodes are matched by what they compute, not by their ids.
// Returns the number of differences.
int print_diff(const Graph& a, const Graph& b, std::ostream& out);

}  // namespace graft::inspect
