// The wait policy of the OpenMP threads graft's kernels, OpenBLAS and oneDNN
// share: whether graft shortened libgomp's spin (openmp_wait/openmp_wait.h)
// and, in words, what is in effect (for build_info()).
#pragma once

#include <string>

namespace graft::runtime {

// One sentence naming the policy in effect and who chose it.
std::string openmp_wait_description();

}  // namespace graft::runtime
