#include "codegen/cuda/driver.h"
#include "codegen/cuda/library_names.h"
#include "graft/device.h"
#include "interpreter/blas_core.h"
#include "interpreter/kernels/float_math.h"
#include "interpreter/onednn_products.h"
#include "runtime/openmp_wait_policy.h"

namespace graft {

std::string build_info() {
  const interpreter::BlasState& blas = interpreter::ensure_blas_core();
  std::string s = "graft " GRAFT_VERSION_STRING "; CPU: " + interpreter::cpu_features_str(interpreter::cpu_features());
  s += "; GEMM: " + blas.library;
  if (blas.library != "Eigen") s += ", " + interpreter::blas_kernels_now() + " kernels";
  if (!blas.note.empty()) s += " (" + blas.note + ")";
  s += "; bf16 GEMM: " + interpreter::bf16_gemm_description();
  s += "; f32 convolution: " + interpreter::f32_conv_description();
  s += "; float math: ";
  s += interpreter::float_isa_name(interpreter::float_math().isa);
  s += " (exp, tanh, ... in interpreter and cpu-backend kernels; cpu-backend arithmetic: -march=native)";
  s += "; OpenMP threads (graft's, OpenBLAS's, oneDNN's): " + runtime::openmp_wait_description();
  // The CUDA driver is loaded (dlopen) to say what it finds.
  std::string why;
  s += "; CUDA: ";
  if (codegen::cuda::cuda_available(&why)) {
    codegen::cuda::CudaDriver& d = codegen::cuda::cuda_driver();
    const codegen::cuda::CudaDeviceInfo dev = d.device_info(0);
    s += d.description() + ", " + std::to_string(d.device_count()) + " device(s), cuda:0 " + dev.name + " sm_" +
         std::to_string(dev.arch);
  } else {
    s += "no device (" + why + ")";
  }
  // The toolkit's libraries are named, not loaded (they load when a CUDA device uses them).
  s += "; " + codegen::cuda::cuda_libraries_description();
  return s;
}

}  // namespace graft
