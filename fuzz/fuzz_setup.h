// What every graft fuzz target does once before its first input, and the
// small helpers they share.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "graft/graft.h"
#include "ir/graph.h"

namespace graft_fuzz {

// Devices get 256 KiB, so that an input asking for a big array gets graft's
// OutOfMemoryError at once instead of minutes of work (a timeout) or the
// fuzzer's RSS limit. Kernels run on one thread: coverage and timing stay
// deterministic.
inline void setup() {
  const double physical = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
  char fraction[32];
  std::snprintf(fraction, sizeof fraction, "%.3g", std::min(1.0, 256.0 * (1 << 10) / physical));
  setenv("GRAFT_MEM_FRACTION", fraction, 1);
  setenv("OMP_NUM_THREADS", "1", 1);
  // A mutated while loop may never reach its bound: a trip limit turns that
  // into graft's Error instead of a fuzzer timeout.
  setenv("GRAFT_WHILE_MAX_TRIPS", "10000", 1);
}

// Runs a loaded graph on zeros of its input types when they are small.
inline void evaluate_on_zeros(const graft::Graph& g) {
  std::vector<graft::Array> inputs;
  int64_t total = 0;
  for (graft::ir::ValueId v : g.ir().inputs()) {
    const graft::ir::ValueType& t = g.ir().type(v);
    total += t.num_elements();
    if (total > (1 << 16)) return;
    inputs.push_back(graft::zeros(t.shape, t.dtype));
  }
  if (g.num_nodes() > 64) return;
  (void)graft::evaluate(g, inputs);
}

}  // namespace graft_fuzz
