#include "graft/device.h"
#include "interpreter/blas_core.h"
#include "interpreter/kernels/float_math.h"

namespace graft {

std::string build_info() {
  const interpreter::BlasState& blas = interpreter::ensure_blas_core();
  std::string s = "graft " GRAFT_VERSION_STRING "; CPU: " + interpreter::cpu_features_str(interpreter::cpu_features());
  s += "; GEMM: " + blas.library;
  if (blas.library != "Eigen") s += ", " + interpreter::blas_kernels_now() + " kernels";
  if (!blas.note.empty()) s += " (" + blas.note + ")";
  s += "; float math: ";
  s += interpreter::float_isa_name(interpreter::float_math().isa);
  s += " (exp, tanh, ... in interpreter and cpu-backend kernels; cpu-backend arithmetic: -march=native)";
  s += "; CUDA: not built";
  return s;
}

}  // namespace graft
