#include "codegen/cuda/linalg.h"

#include <memory>

#include "codegen/cpu/cpp_text.h"
#include "codegen/cuda/driver.h"
#include "graft/errors.h"
#include "ir/attr_access.h"
#include "ir/dtype.h"
#include "runtime/buffer.h"
#include "runtime/device.h"

namespace graft::codegen::cuda {
namespace {

using cpu::detail::cat;
using cpu::detail::ctype;
using cpu::detail::num;
using interpreter::KernelCall;

runtime::Device& cuda_device_here(const char* what) {
  runtime::Device& d = runtime::current_device();
  if (d.host_addressable())
    throw Error(std::string("cuda: ") + what + " ran with " + d.name() + " as the current device, not a CUDA device");
  return d;
}

// The number of matrices in a batch of [..., rows, cols] arrays.
int64_t matrices_of(const ir::ValueType& t) {
  int64_t b = 1;
  for (int i = 0; i + 2 < t.rank(); ++i) b *= t.shape[static_cast<size_t>(i)];
  return b;
}

// A NaN of the dtype, in the kernels' source.
std::string nan_of(DType dtype) { return dtype == DType::f64 ? "nan(\"\")" : "nanf(\"\")"; }

bool refuse(const ir::ValueType& t, std::string* why) {
  if (t.dtype != DType::f32 && t.dtype != DType::f64) {
    *why = std::string("cuSOLVER here takes f32 and f64, not ") + dtype_name(t.dtype);
    return true;
  }
  for (int64_t d : t.shape)
    if (d > 0x7fffffff) {
      *why = "a matrix of " + ir::type_str(t) + " exceeds cuSOLVER's int sizes";
      return true;
    }
  return false;
}

void launch(runtime::Device& device, const CudaKernel& k, const std::vector<const void*>& ins,
            const std::vector<void*>& outs) {
  cuda_driver().launch(device.id(), k, kernel_params(k, ins, outs));
}

// cholesky: L in the lower triangle, zeros above, NaNs where potrf failed.
std::optional<SolverKernel> cholesky_kernel(const OpKernelRequest& r, std::string* why) {
  const ir::ValueType& a = *r.inputs[0];
  if (refuse(a, why)) return std::nullopt;
  const int64_t n = a.shape.back(), batch = matrices_of(a), total = a.num_elements();
  const ir::ValueType info_type{DType::i32, {batch}};
  ir::Attrs no_attrs;
  OpKernelRequest tidy{r.op, {&a, &info_type}, {&a}, no_attrs};
  const std::string body = cat(
      "  for (int64_t t = gcg_tid; t < p.n; t += gcg_stride) {\n",                                                   //
      "    const int64_t b = t / ", num(n * n), ", i = (t / ", num(n), ") % ", num(n), ", j = t % ", num(n), ";\n",  //
      "    p.out0[t] = p.in1[b] != 0 ? ", nan_of(a.dtype), " : (j > i ? (", ctype(a.dtype), ")0 : p.in0[t]);\n  }\n");
  auto kernel = std::make_shared<const CudaKernel>(detail::frame_kernel("cholesky's triangle", tidy, total, body));
  SolverKernel out{nullptr, {*kernel}};
  out.run = [kernel, n, batch, f64 = a.dtype == DType::f64](const KernelCall& call) {
    const size_t bytes = call.outputs[0].type->num_bytes();
    if (bytes == 0) return;
    runtime::Device& device = cuda_device_here("cholesky");
    device.transfers()->within(call.outputs[0].data, call.inputs[0].data, bytes);
    runtime::BufferPtr info = runtime::make_buffer(static_cast<size_t>(batch) * sizeof(int32_t));
    SolverCall c;
    c.routine = SolverCall::Routine::potrf;
    c.f64 = f64;
    c.upper = true;  // a^T's upper triangle is a's lower one
    c.n = n;
    c.batch = batch;
    c.a = call.outputs[0].data;
    c.lda = n;
    c.stride_a = n * n;
    c.info = static_cast<int32_t*>(info->data());
    cuda_driver().solver(device.id(), c);
    launch(device, *kernel, {call.outputs[0].data, info->data()}, {call.outputs[0].data});
  };
  return out;
}

// eigh: syevd on a copy, then eigenvectors transposed into columns.
std::optional<SolverKernel> eigh_kernel(const OpKernelRequest& r, std::string* why) {
  const ir::ValueType& a = *r.inputs[0];
  if (refuse(a, why)) return std::nullopt;
  const bool lower = ir::attr<int64_t>(r.attrs, "lower", r.op) != 0;
  const ir::ValueType& w = *r.outputs[1];
  const int64_t n = a.shape.back(), batch = matrices_of(a), total = a.num_elements();
  const ir::ValueType info_type{DType::i32, {batch}};
  ir::Attrs no_attrs;
  OpKernelRequest tidy{r.op, {&a, &w, &info_type}, {&a, &w}, no_attrs};
  const std::string nan = nan_of(a.dtype);
  const std::string body = cat("  for (int64_t t = gcg_tid; t < p.n; t += gcg_stride) {\n",  //
                               "    const int64_t b = t / ", num(n * n), ", i = (t / ", num(n), ") % ", num(n),
                               ", j = t % ", num(n), ";\n",  //
                               "    p.out0[t] = p.in2[b] != 0 ? ", nan, " : p.in0[b * ", num(n * n), " + j * ", num(n),
                               " + i];\n",  //
                               "    if (t < ", num(batch * n), ") p.out1[t] = p.in2[t / ", num(std::max<int64_t>(n, 1)),
                               "] != 0 ? ", nan, " : p.in1[t];\n  }\n");
  auto kernel = std::make_shared<const CudaKernel>(detail::frame_kernel("eigh's eigenvectors", tidy, total, body));
  SolverKernel out{nullptr, {*kernel}};
  out.run = [kernel, n, batch, lower, f64 = a.dtype == DType::f64](const KernelCall& call) {
    const size_t bytes = call.outputs[0].type->num_bytes();
    if (bytes == 0) return;
    runtime::Device& device = cuda_device_here("eigh");
    runtime::BufferPtr vectors = runtime::make_buffer(bytes);
    device.transfers()->within(vectors->data(), call.inputs[0].data, bytes);
    runtime::BufferPtr info = runtime::make_buffer(static_cast<size_t>(batch) * sizeof(int32_t));
    SolverCall c;
    c.routine = SolverCall::Routine::syevd;
    c.f64 = f64;
    c.upper = lower;  // a^T's upper triangle is a's lower one
    c.n = n;
    c.batch = batch;
    c.a = vectors->data();
    c.lda = n;
    c.stride_a = n * n;
    c.b = call.outputs[1].data;
    c.stride_b = n;
    c.info = static_cast<int32_t*>(info->data());
    cuda_driver().solver(device.id(), c);
    launch(device, *kernel, {vectors->data(), call.outputs[1].data, info->data()},
           {call.outputs[0].data, call.outputs[1].data});
  };
  return out;
}

// triangular_solve: one trsm per matrix, in place on a copy of b.
std::optional<SolverKernel> triangular_solve_kernel(const OpKernelRequest& r, std::string* why) {
  const ir::ValueType& a = *r.inputs[0];
  const ir::ValueType& b = *r.inputs[1];
  if (refuse(a, why) || refuse(b, why)) return std::nullopt;
  const bool left = ir::attr<int64_t>(r.attrs, "left_side", r.op) != 0;
  const bool lower = ir::attr<int64_t>(r.attrs, "lower", r.op) != 0;
  const bool trans = ir::attr<int64_t>(r.attrs, "transpose_a", r.op) != 0;
  const bool unit = ir::attr<int64_t>(r.attrs, "unit_diagonal", r.op) != 0;
  const int64_t k = a.shape.back(), rows = b.shape[static_cast<size_t>(b.rank() - 2)], cols = b.shape.back();
  SolverCall plan;
  plan.routine = SolverCall::Routine::trsm;
  plan.f64 = a.dtype == DType::f64;
  plan.left = !left;   // x^T op(a)^T = b^T: the other side
  plan.upper = lower;  // a^T's upper triangle is a's lower one
  plan.trans = trans;
  plan.unit = unit;
  plan.m = cols;  // b^T is cols x rows, column-major
  plan.n = rows;
  plan.batch = matrices_of(b);
  plan.lda = k;
  plan.stride_a = k * k;
  plan.ldb = cols;
  plan.stride_b = rows * cols;
  SolverKernel out;
  out.run = [plan](const KernelCall& call) {
    const size_t bytes = call.outputs[0].type->num_bytes();
    if (bytes == 0) return;
    runtime::Device& device = cuda_device_here("triangular_solve");
    device.transfers()->within(call.outputs[0].data, call.inputs[1].data, bytes);
    SolverCall c = plan;
    c.a = const_cast<void*>(call.inputs[0].data);
    c.b = call.outputs[0].data;
    cuda_driver().solver(device.id(), c);
  };
  return out;
}

}  // namespace

bool has_solver_kernel(ir::Op op) {
  return op == ir::Op::cholesky || op == ir::Op::eigh || op == ir::Op::triangular_solve;
}

std::optional<SolverKernel> solver_kernel(const OpKernelRequest& request, std::string* why) {
  std::string ignored;
  if (!why) why = &ignored;
  switch (request.op) {
    case ir::Op::cholesky: return cholesky_kernel(request, why);
    case ir::Op::eigh: return eigh_kernel(request, why);
    case ir::Op::triangular_solve: return triangular_solve_kernel(request, why);
    default: *why = std::string(ir::op_name(request.op)) + " has no cuSOLVER kernel"; return std::nullopt;
  }
}

}  // namespace graft::codegen::cuda
