#include "graft/device.h"
#include "interpreter/blas_core.h"

namespace graft {

std::string build_info() {
  const interpreter::BlasState& blas = interpreter::ensure_blas_core();
  std::string s = "graft " GRAFT_VERSION_STRING "; CPU: " + interpreter::cpu_features_str(interpreter::cpu_features());
  s += "; GEMM: " + blas.library;
  if (blas.library != "Eigen") s += ", " + interpreter::blas_kernels_now() + " kernels";
  if (!blas.note.empty()) s += " (" + blas.note + ")";
  s += "; float math: interpreter kernels built for baseline x86-64, cpu-backend kernels for -march=native";
  s += "; CUDA: not built";
  return s;
}

}  // namespace graft
