#include "interpreter/cpu_features.h"

namespace graft::interpreter {

CpuFeatures cpu_features() {
  CpuFeatures f;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  f.avx2_fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  f.avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
#endif
  return f;
}

std::string cpu_features_str(const CpuFeatures& f) {
  if (f.avx512) return "avx512 avx2 fma";
  if (f.avx2_fma) return "avx2 fma";
  return "baseline x86-64";
}

}  // namespace graft::interpreter
