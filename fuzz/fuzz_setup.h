// What every graft fuzz target does once before its first input, and the
// small helpers they share.
#pragma once

#include <cstdlib>

#include "graft/graft.h"
#include "ir/graph.h"

namespace graft_fuzz {

// Devices get a small memory limit, so that an input asking for a huge array
// gets graft's OutOfMemoryError quickly instead of the fuzzer's RSS limit.
// Kernels run on one thread: coverage and timing stay deterministic.
inline void setup() {
  setenv("GRAFT_MEM_FRACTION", "0.02", 1);
  setenv("OMP_NUM_THREADS", "1", 1);
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
