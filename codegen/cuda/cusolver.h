// cuSOLVER's dense routines through dlopen (libcusolver.so.12, else .11):
// one handle per device, bound to the device's stream, running the
// factorizations of driver.h's SolverCall one batch entry after another.
// Never linked, so graft builds and runs without it.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "codegen/cuda/driver.h"

namespace graft::codegen::cuda {

class Cusolver {
 public:
  virtual ~Cusolver() = default;
  // Runs a factorization `call` (any routine but trsm) on `stream` (a CUstream) with the handle
  // of this thread's current context; workspace(bytes) returns device
  // memory that stays valid until the stream's queued work is done.
  virtual void run(int device, void* stream, const SolverCall& call,
                   const std::function<void*(size_t bytes)>& workspace) = 0;
};

// Loads cuSOLVER; throws UnsupportedError naming what is missing.
std::unique_ptr<Cusolver> load_cusolver();

}  // namespace graft::codegen::cuda
