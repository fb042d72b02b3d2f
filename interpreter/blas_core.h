// Which GEMM kernels run under dot_general, and the repair for a CPU that
// OpenBLAS does not recognise. Debian's OpenBLAS (DYNAMIC_ARCH) picks its
// kernels by CPU model; on a model newer than it knows (seen: an AVX-512
// Xeon) it falls back to Prescott's SSE3 kernels, 5-6x slower. graft reads
// the CPU's features, and when OpenBLAS chose kernels below them it selects
// the right ones before the first GEMM (OpenBLAS re-reads OPENBLAS_CORETYPE
// when its dynamic dispatch is re-initialised). A user's own
// OPENBLAS_CORETYPE is always respected.
#pragma once

#include <string>
#include <string_view>

#include "interpreter/cpu_features.h"

namespace graft::interpreter {

// The OpenBLAS core type to select instead of `chosen` (OpenBLAS's name for
// the kernels it picked, e.g. "Prescott") on a CPU with `f`; empty to keep them.
std::string better_blas_core(std::string_view chosen, const CpuFeatures& f);

struct BlasState {
  std::string library;            // "OpenBLAS 0.3.21 (OpenMP)", or "Eigen" without OpenBLAS
  std::string chosen_by_library;  // the kernels OpenBLAS picked by itself
  std::string running;            // the kernels in use
  std::string note;               // why they differ, or empty
};

// Makes sure the right kernels run (once, at load; later calls return the
// same state).
const BlasState& ensure_blas_core();

// The kernels running now (OpenBLAS's core name, or "Eigen ...").
std::string blas_kernels_now();

// The check and repair itself, run again (tests and bench/gemm, after forcing
// OpenBLAS onto its fallback kernels).
BlasState repair_blas_core();

}  // namespace graft::interpreter
