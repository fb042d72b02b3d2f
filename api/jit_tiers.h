// Which tier ran jitted calls of cpu executables (for tests and benchmarks):
// the interpreter while the module compiled, or the compiled module.
#pragma once

#include <cstdint>

namespace graft::detail {

struct TierCounts {
  int64_t interpreted = 0;  // calls of a cpu executable whose module was not loaded yet (or failed)
  int64_t compiled = 0;     // calls that ran its generated kernels
};
TierCounts tier_counts();  // since the process started

}  // namespace graft::detail
