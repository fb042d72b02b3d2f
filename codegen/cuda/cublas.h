// cuBLAS through dlopen (libcublas.so.13, else .12): one handle per device,
// bound to the device's stream, running strided-batched GEMMs (driver.h's
// GemmCall) and triangular solves (trsm) in cuBLAS's default math mode (no TF32: float GEMMs compute in
// float, as on the CPU). Never linked, so graft builds and runs without it.
#pragma once

#include <memory>
#include <string>

#include "codegen/cuda/driver.h"

namespace graft::codegen::cuda {

class Cublas {
 public:
  virtual ~Cublas() = default;
  // Runs `call` with the handle of the context current on this thread,
  // queued on `stream` (a CUstream).
  virtual void gemm(int device, void* stream, const GemmCall& call) = 0;
  // A trsm SolverCall (driver.h), one batch entry after another, on `stream`.
  virtual void trsm(int device, void* stream, const SolverCall& call) = 0;
};

// Loads cuBLAS; throws UnsupportedError naming what is missing.
std::unique_ptr<Cublas> load_cublas();

}  // namespace graft::codegen::cuda
