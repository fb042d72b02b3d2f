// CUDA kernels for the primitives that are neither in a fused body, nor a
// cuBLAS GEMM, nor a strided copy: gather, scatter_add, dynamic_slice,
// dynamic_update_slice (codegen/cuda/indexing.cpp), reduce_prod,
// reduce_and, reduce_or, argmax, argmin and the cumulative ops
// (codegen/cuda/reduce.cpp), sort (codegen/cuda/sort.cpp), iota
// (codegen/cuda/creation.cpp), random_bits (codegen/cuda/random.cpp), the
// windowed reductions (codegen/cuda/window.cpp) and conv_general_dilated
// (codegen/cuda/conv.cpp, whose sums are in another order than the CPU's).
//
// Each node gets its own kernel, generated for its types and attributes
// (shapes and strides are constants in the source, so a module serves every
// call of the same node), with the emitter's ABI (emit.h): in0.., out0..,
// no scalars, n = the threads' grid-stride work (and, for scatter_add,
// the operand copied into the output before the launch: copy_before). Every output element is
// written by one thread, adds and compares happen in the interpreter's
// order, so each kernel gives the interpreter's bits (threefry, sorting and
// indexing are exact; sums are in the same order). No atomics.
//
// A shape a kernel does not take (a sort too long for its O(n^2) ranking, a
// dtype the op has no CUDA step for) is refused with the reason, and the
// node runs on the host (node_kernels.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "codegen/cuda/emit.h"
#include "ir/attrs.h"
#include "ir/op.h"
#include "ir/value.h"

namespace graft::codegen::cuda {

struct OpKernelRequest {
  ir::Op op;
  std::vector<const ir::ValueType*> inputs, outputs;
  const ir::Attrs& attrs;
};

// Whether `op` has a kernel here (some of its shapes may still be refused).
bool has_op_kernel(ir::Op op);

// The kernel of one node, or nullopt with `*why` saying why it is refused.
std::optional<CudaKernel> op_kernel(const OpKernelRequest& request, std::string* why);

// Names a generated kernel after its source: every `placeholder` in the
// source becomes gk_<hash of the source>, so equal kernels share one module
// in every cache, and different ones never collide in a module.
void name_after_source(CudaKernel* kernel, const std::string& placeholder);

namespace detail {

// The module of one op kernel: the prelude, the params struct (typed
// in<j>/out<k> pointers, then int64 n), and
//   __global__ void <sym>(const <sym>_params p) { gcg_tid, gcg_stride, <body> }
// with the emulated entry; `threads` is the grid-stride work (n).
// `helpers` (device functions, guarded by their own macro) go between the
// prelude and the kernel.
CudaKernel frame_kernel(const std::string& what, const OpKernelRequest& request, int64_t threads,
                        const std::string& body, const std::string& helpers = {});

// The row-major offset of element `var` of a box of `sizes` walked with
// `strides` (sizes may hold 1s; an empty box is "0"). No size may be 0.
std::string offset_expr(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, const std::string& var);

// acc (+) v and acc (*) v as the interpreter's gcg_wrap_add and
// gcg_wrap_mul compute them for `dtype` (signed integers wrap).
std::string wrapping_add_expr(DType dtype, const std::string& a, const std::string& b);
std::string wrapping_mul_expr(DType dtype, const std::string& a, const std::string& b);

// The family kernels op_kernel dispatches to (ir::op_info(op).family).
std::optional<CudaKernel> indexing_kernel(const OpKernelRequest& r, std::string* why);
std::optional<CudaKernel> reduce_kernel(const OpKernelRequest& r, std::string* why);
std::optional<CudaKernel> sort_kernel(const OpKernelRequest& r, std::string* why);
std::optional<CudaKernel> creation_kernel(const OpKernelRequest& r, std::string* why);
std::optional<CudaKernel> random_kernel(const OpKernelRequest& r, std::string* why);
std::optional<CudaKernel> window_kernel(const OpKernelRequest& r, std::string* why);
std::optional<CudaKernel> conv_kernel(const OpKernelRequest& r, std::string* why);

}  // namespace detail
}  // namespace graft::codegen::cuda
