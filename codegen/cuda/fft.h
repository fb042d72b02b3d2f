// The fft op on a CUDA device: one cuFFT call (driver.h's FftCall) for the
// whole batch of transforms over the trailing fft_lengths axes, which are
// contiguous in graft's row-major layout, so cuFFT's basic layout is graft's.
// Inverse transforms are then scaled by 1/n with a generated kernel (cuFFT
// does not scale; lax.fft does); irfft transforms a copy of its input
// (cuFFT's C2R overwrites it). A size beyond cuFFT's ints is refused with
// the reason, and the node runs on the host.
#pragma once

#include <optional>
#include <string>

#include "codegen/cuda/linalg.h"
#include "codegen/cuda/op_kernels.h"

namespace graft::codegen::cuda {

// The fft node's kernel, or nullopt with `*why` saying why it is refused.
std::optional<SolverKernel> fft_kernel(const OpKernelRequest& request, std::string* why);

}  // namespace graft::codegen::cuda
