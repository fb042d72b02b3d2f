// What a node costs: the flops it computes and the bytes it reads and
// writes, the figures of jit's cost_analysis() and graft-inspect's stats.
// Control flow counts its bodies: a scan its body times its length, a cond
// its costliest branch, a while loop one trip of its condition and body
// (the trip count is known only at run time, so the cost is per trip).
#pragma once

#include "ir/graph.h"

namespace graft::ir {

struct Cost {
  double flops = 0;
  double bytes = 0;       // operands read plus results written
  bool per_trip = false;  // a while loop's cost is one trip's

  Cost& operator+=(const Cost& c) {
    flops += c.flops;
    bytes += c.bytes;
    per_trip = per_trip || c.per_trip;
    return *this;
  }
};

// Flops: 2*M*N*K for dot_general and convolutions, one per result element of
// elementwise ops, one per operand element of reductions, one per window
// element of windowed reductions, 5 n log2(n) per FFT of length n; other ops
// (data movement, linear algebra's library calls, as XLA's custom calls)
// count no flops. Bytes: a node's operands and results; for a node with
// bodies, the bodies' bytes as often as they run; for a fusion, its own
// operands and results (what its kernel moves) with its body's flops.
Cost node_cost(const Graph& g, const Node& n);

// The sum over a graph's nodes.
Cost graph_cost(const Graph& g);

}  // namespace graft::ir
