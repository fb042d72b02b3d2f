// The vector instruction sets of the machine graft runs on, read at run time
// (the library is built for baseline x86-64): the BLAS repair and the float
// math's instruction set are chosen from them.
#pragma once

#include <string>

namespace graft::interpreter {

struct CpuFeatures {
  bool avx2_fma = false;  // AVX2 and FMA3
  bool avx512 = false;    // AVX-512 F, BW, VL and DQ (what OpenBLAS's SkylakeX kernels use)
};

CpuFeatures cpu_features();  // of this machine
std::string cpu_features_str(const CpuFeatures& f);  // "avx512 avx2 fma" / "baseline x86-64"

}  // namespace graft::interpreter
