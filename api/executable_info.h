// What a jit executable holds, counted (for graft-inspect's stats and tests):
// its nodes, its fused kernels and how many of them run as generated C++.
#pragma once

#include <cstdint>

#include "graft/jit.h"

namespace graft::detail {

struct ExecutableInfo {
  int64_t nodes = 0;             // after simplification and fusion
  int64_t traced_nodes = 0;      // in the graph it was compiled from
  int64_t fusion_kernels = 0;    // fusion nodes
  int64_t fused_ops = 0;         // ops inside them (constants aside)
  int64_t compiled_kernels = 0;  // Backend::cpu: fusion nodes run by generated C++ (once the module loaded); cuda: nodes run by generated kernels
  int64_t distinct_kernels = 0;  // distinct kernels among those
  int64_t arena_bytes = 0;       // the per-call arena of planned temporaries
};

ExecutableInfo executable_info(const Executable& exe);

}  // namespace graft::detail
