// cholesky, eigh and triangular_solve on a CUDA device: cuSOLVER's potrf and
// syevd and cuBLAS's trsm (driver.h's SolverCall), on the column-major view
// of graft's row-major matrices, which is their transpose:
//   cholesky: potrf of the upper triangle of a^T (a's lower one) leaves L
//     in a's lower triangle; a kernel then zeroes the upper one, and fills a
//     matrix whose factorization failed with NaNs, as JAX;
//   eigh: syevd of the triangle of a^T that is a's `lower` one; a kernel
//     transposes the eigenvectors into columns (NaNs where syevd failed);
//   triangular_solve: op(a) x = b is x^T op(a)^T = b^T, a trsm on the
//     other side, of the other triangle, with the same transpose flag.
// The matrices of a batch are solved one after another on the device's
// stream. A dtype other than f32 and f64, or a size beyond cuSOLVER's ints,
// is refused with the reason, and the node runs on the host.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "codegen/cuda/emit.h"
#include "codegen/cuda/op_kernels.h"
#include "interpreter/evaluate.h"
#include "interpreter/kernel.h"

namespace graft::codegen::cuda {

struct SolverKernel {
  interpreter::NodeKernel run;      // runs the node on the current CUDA device
  std::vector<CudaKernel> kernels;  // the generated kernels it launches besides the library calls
};

// Whether `op` runs through cuSOLVER or cuBLAS's trsm here.
bool has_solver_kernel(ir::Op op);

// The node's kernel, or nullopt with `*why` saying why it is refused.
std::optional<SolverKernel> solver_kernel(const OpKernelRequest& request, std::string* why);

}  // namespace graft::codegen::cuda
