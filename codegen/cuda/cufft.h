// cuFFT through dlopen (libcufft.so.12, else .11): plans made per device and
// transform shape at first use and kept, each bound to the device's stream.
// Never linked, so graft builds and runs without it.
#pragma once

#include <memory>
#include <string>

#include "codegen/cuda/driver.h"

namespace graft::codegen::cuda {

class Cufft {
 public:
  virtual ~Cufft() = default;
  // Runs `call`'s unscaled transforms on `stream` (a CUstream) in this
  // thread's current context (the device's).
  virtual void run(int device, void* stream, const FftCall& call) = 0;
};

// Loads cuFFT; throws UnsupportedError naming what is missing.
std::unique_ptr<Cufft> load_cufft();

}  // namespace graft::codegen::cuda
