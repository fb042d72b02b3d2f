// The CUDA driver graft runs on, chosen once per process by
// GRAFT_CUDA_DRIVER:
//   unset      the NVIDIA driver, libcuda.so.1, loaded with dlopen at first
//              use (never linked); modules compiled by NVRTC (nvrtc.h);
//   emulated   the emulated driver: device memory is host memory, and the
//              same generated CUDA source runs as host C++ on fibres
//              (emulator/fibres.h), compiled by the CPU backend's compiler;
//   a path     that libcuda (tests load the toolkit's stub with it).
// Whatever is missing is an UnsupportedError saying what: no driver, the
// stub driver, no GPU, no NVRTC, a driver too old for the PTX.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "codegen/cuda/emit.h"
#include "ir/fft_type.h"

namespace graft::codegen::cuda {

struct CudaDeviceInfo {
  std::string name;         // "NVIDIA H100 80GB HBM3", "emulated CUDA device"
  int arch = 0;             // compute capability as 10 * major + minor (90)
  int multiprocessors = 0;
  int64_t total_memory = 0;  // bytes
  bool emulated = false;
};

// One strided-batched GEMM in cuBLAS's terms (column-major; alpha 1, beta 0):
// for each batch entry b, C_b (m x n, leading dimension ldc) = op(A_b) op(B_b)
// with A_b = a + b * stride_a elements (op: transposed when trans_a), and
// likewise for B and C. codegen/cuda/dot_general.h maps dot_general onto it.
struct GemmCall {
  bool f64 = false;  // double, else float
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0, batch = 1;
  const void* a = nullptr;
  int64_t lda = 0, stride_a = 0;
  const void* b = nullptr;
  int64_t ldb = 0, stride_b = 0;
  void* c = nullptr;
  int64_t ldc = 0, stride_c = 0;
};

// One dense linear-algebra call per batch entry, column-major, in the terms
// of cuSOLVER (potrf, syevd, getrf, geqrf, orgqr, gesvd) and cuBLAS (trsm).
// Batch entry e uses a + e * stride_a, b + e * stride_b and so on
// (elements), and writes info[e] (device memory; trsm has none).
//   potrf: a (n x n) to its Cholesky factor in the `upper` (else lower)
//     triangle; the other triangle is left as it was.
//   syevd: a (n x n, its `upper` or lower triangle read) to its eigenvectors
//     (columns), b (n) to its eigenvalues, ascending.
//   trsm:  b (m x n) to x with op(a) x = b (left) or x op(a) = b, a the
//     `upper` or lower triangle of an m x m (left) or n x n matrix, op(a) =
//     a^T when trans, its diagonal taken as ones when unit.
//   getrf: a (m x n) to its LU factors, ipiv (min(m, n)) to the 1-based rows
//     swapped.
//   geqrf: a (m x n) to its packed Householder QR, b (min(m, n)) to the taus.
//   orgqr: a (m x n, k reflectors below its diagonal, taus in b) to the
//     first n columns of their product.
//   gesvd: a (m x n, m >= n; destroyed) to b (min(m, n) singular values),
//     and with job 'S' or 'A' u (m x min(m, n), or m x m) and vt (min(m, n)
//     x n, or n x n); job 'N' computes neither.
struct SolverCall {
  enum class Routine : uint8_t { potrf, syevd, trsm, getrf, geqrf, orgqr, gesvd };
  Routine routine = Routine::potrf;
  bool f64 = false;  // double, else float
  bool upper = false;
  bool left = true, trans = false, unit = false;  // trsm
  char job = 'N';                                 // gesvd
  int64_t m = 0, n = 0, k = 0, batch = 1;
  void* a = nullptr;
  int64_t lda = 0, stride_a = 0;
  void* b = nullptr;
  int64_t ldb = 0, stride_b = 0;
  void* u = nullptr;
  int64_t ldu = 0, stride_u = 0;
  void* vt = nullptr;
  int64_t ldvt = 0, stride_vt = 0;
  int32_t* ipiv = nullptr;  // getrf: min(m, n) per batch entry
  int32_t* info = nullptr;
};

// `batch` FFTs over the trailing `rank` (1 to 3) axes of contiguous data, in
// lax.fft's terms: `lengths` are the transform's sizes (irfft: its real
// output's, the input's last axis lengths[rank-1] / 2 + 1), and inverse
// transforms are scaled by 1 / (lengths' product). cuFFT does not scale:
// `scale` (parameters: out, out) is the kernel a GPU driver runs after an
// inverse one. irfft's input may be overwritten (cuFFT's C2R does).
struct FftCall {
  ir::FftType type = ir::FftType::fft;
  bool f64 = false;  // double parts, else float
  int rank = 1;
  int64_t lengths[3] = {1, 1, 1};
  int64_t batch = 1;
  void* in = nullptr;
  void* out = nullptr;
  const CudaKernel* scale = nullptr;
};

class CudaDriver {
 public:
  virtual ~CudaDriver() = default;
  // One line: the driver, its version, NVRTC's, and whether it is emulated.
  virtual std::string description() const = 0;
  virtual int device_count() const = 0;
  virtual CudaDeviceInfo device_info(int device) const = 0;

  // Device memory: nullptr when the device has no room.
  virtual void* mem_alloc(int device, size_t bytes) = 0;
  virtual void mem_free(int device, void* ptr) = 0;
  // Copies on the device's stream; a copy to the host waits for it.
  virtual void copy_to_device(int device, void* dst, const void* src, size_t bytes) = 0;
  virtual void copy_to_host(int device, void* dst, const void* src, size_t bytes) = 0;
  virtual void copy_on_device(int device, void* dst, const void* src, size_t bytes) = 0;

  // Launches `kernel` on the device's stream with these parameters
  // (kernel_params), compiling and loading its module first unless cached.
  virtual void launch(int device, const CudaKernel& kernel, const std::vector<uint64_t>& params) = 0;
  // A GEMM on the device's stream: cuBLAS (loaded with dlopen at first use)
  // on a GPU, a host loop on the emulated driver. Throws UnsupportedError
  // when cuBLAS cannot be loaded.
  virtual void gemm(int device, const GemmCall& call) = 0;
  // A dense solver call (SolverCall) on the device's stream: cuSOLVER or
  // cuBLAS (loaded with dlopen at first use) on a GPU, the host's LAPACK on
  // the emulated driver. Throws UnsupportedError when the library cannot be
  // loaded.
  virtual void solver(int device, const SolverCall& call) = 0;
  // An FFT (FftCall) on the device's stream: cuFFT (loaded with dlopen at
  // first use) on a GPU, the host's FFT kernel on the emulated driver.
  // Throws UnsupportedError when cuFFT cannot be loaded.
  virtual void fft(int device, const FftCall& call) = 0;
  // Waits for everything queued on the device's stream.
  virtual void synchronize(int device) = 0;
};

// The process's driver (made at first use). Throws UnsupportedError when
// none is usable, saying why.
CudaDriver& cuda_driver();
// Whether cuda_driver() would succeed with at least one device; *why says
// what is missing otherwise. Never throws.
bool cuda_available(std::string* why = nullptr);

// Drivers, for tests: the emulator, and the driver API from the library at
// `path` (throws UnsupportedError like cuda_driver()).
std::unique_ptr<CudaDriver> make_emulated_driver();
std::unique_ptr<CudaDriver> load_driver_library(const std::string& path);

}  // namespace graft::codegen::cuda
