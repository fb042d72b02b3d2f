#include "codegen/cuda/linalg.h"

#include <algorithm>
#include <memory>

#include "codegen/cpu/cpp_text.h"
#include "codegen/cuda/cuda_devices.h"
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

// A kernel copying batches of rows x cols grids: out0[b * out_batch + r *
// cols + c] = in0[b * in_batch + r * row_stride + c * col_stride], with
// zeros below the diagonal (c < r) when upper_only. It moves matrices
// between graft's row-major layout and the libraries' column-major one.
struct Grid {
  int64_t batch, rows, cols, in_batch, row_stride, col_stride, out_batch;
  bool upper_only = false;
};

std::shared_ptr<const CudaKernel> grid_kernel(ir::Op op, DType dtype, const Grid& g, const char* what) {
  const ir::ValueType in{dtype, {g.batch * g.in_batch}}, out{dtype, {g.batch * g.out_batch}};
  ir::Attrs no_attrs;
  OpKernelRequest r{op, {&in}, {&out}, no_attrs};
  const int64_t per = g.rows * g.cols;
  std::string body = cat("  for (int64_t t = gcg_tid; t < p.n; t += gcg_stride) {\n",  //
                         "    const int64_t b = t / ", num(per), ", r = (t % ", num(per), ") / ", num(g.cols),
                         ", c = t % ", num(g.cols), ";\n",  //
                         "    ", ctype(dtype), " v = p.in0[b * ", num(g.in_batch), " + r * ", num(g.row_stride),
                         " + c * ", num(g.col_stride), "];\n");
  if (g.upper_only) body += cat("    if (c < r) v = (", ctype(dtype), ")0;\n");
  body += cat("    p.out0[b * ", num(g.out_batch), " + r * ", num(g.cols), " + c] = v;\n  }\n");
  return std::make_shared<const CudaKernel>(detail::frame_kernel(what, r, g.batch * per, body));
}

// Row-major m x n matrices to column-major ones (leading dimension m),
// `out_batch` elements apart, and back.
Grid to_column_major(int64_t batch, int64_t m, int64_t n, int64_t out_batch) {
  return {batch, n, m, m * n, 1, n, out_batch};
}
Grid from_column_major(int64_t batch, int64_t m, int64_t n, int64_t ld, int64_t in_batch) {
  return {batch, m, n, in_batch, 1, ld, m * n};
}

bool refuse_empty(const ir::ValueType& t, std::string* why) {
  if (t.num_elements() == 0) {
    *why = "an empty matrix (" + ir::type_str(t) + ") runs on the host";
    return true;
  }
  return false;
}

SolverCall factor_call(SolverCall::Routine routine, DType dtype, int64_t batch, int64_t m, int64_t n) {
  SolverCall c;
  c.routine = routine;
  c.f64 = dtype == DType::f64;
  c.batch = batch;
  c.m = m;
  c.n = n;
  return c;
}

// lu: getrf on a column-major copy; pivots made 0-based and the permutation
// they give by one thread per matrix.
std::optional<SolverKernel> lu_kernel(const OpKernelRequest& r, std::string* why) {
  const ir::ValueType& a = *r.inputs[0];
  if (refuse(a, why) || refuse_empty(a, why)) return std::nullopt;
  const int64_t m = a.shape[static_cast<size_t>(a.rank() - 2)], n = a.shape.back(), k = std::min(m, n);
  const int64_t batch = matrices_of(a);
  auto in = grid_kernel(r.op, a.dtype, to_column_major(batch, m, n, m * n), "lu's column-major copy");
  auto out = grid_kernel(r.op, a.dtype, from_column_major(batch, m, n, m, m * n), "lu's row-major factors");
  const ir::ValueType ipiv{DType::i32, {batch * k}}, pivots = *r.outputs[1], perm = *r.outputs[2];
  ir::Attrs no_attrs;
  OpKernelRequest pr{r.op, {&ipiv}, {&pivots, &perm}, no_attrs};
  const std::string body = cat("  for (int64_t b = gcg_tid; b < p.n; b += gcg_stride) {\n",  //
                               "    for (int64_t i = 0; i < ", num(m), "; ++i) p.out1[b * ", num(m),
                               " + i] = (int32_t)i;\n", "    for (int64_t i = 0; i < ", num(k), "; ++i) {\n",  //
                               "      const int32_t q = p.in0[b * ", num(k), " + i] - 1;\n",                   //
                               "      p.out0[b * ", num(k), " + i] = q;\n",                                    //
                               "      if (q >= 0 && q < ", num(m), ") {\n",                                    //
                               "        const int32_t s = p.out1[b * ", num(m), " + i];\n",                    //
                               "        p.out1[b * ", num(m), " + i] = p.out1[b * ", num(m), " + q];\n",       //
                               "        p.out1[b * ", num(m), " + q] = s;\n      }\n    }\n  }\n");
  auto piv = std::make_shared<const CudaKernel>(detail::frame_kernel("lu's pivots and permutation", pr, batch, body));
  SolverKernel result{nullptr, {*in, *out, *piv}};
  const SolverCall plan = [&] {
    SolverCall c = factor_call(SolverCall::Routine::getrf, a.dtype, batch, m, n);
    c.lda = m;
    c.stride_a = m * n;
    return c;
  }();
  result.run = [=](const KernelCall& call) {
    runtime::Device& device = cuda_device_here("lu");
    runtime::BufferPtr scratch = runtime::make_buffer(call.outputs[0].type->num_bytes());
    runtime::BufferPtr pivots_1 = runtime::make_buffer(static_cast<size_t>(batch * k) * sizeof(int32_t));
    runtime::BufferPtr info = runtime::make_buffer(static_cast<size_t>(batch) * sizeof(int32_t));
    launch(device, *in, {call.inputs[0].data}, {scratch->data()});
    SolverCall c = plan;
    c.a = scratch->data();
    c.ipiv = static_cast<int32_t*>(pivots_1->data());
    c.info = static_cast<int32_t*>(info->data());
    cuda_driver().solver(device.id(), c);
    launch(device, *out, {scratch->data()}, {call.outputs[0].data});
    launch(device, *piv, {pivots_1->data()}, {call.outputs[1].data, call.outputs[2].data});
  };
  return result;
}

// geqrf: LAPACK's packed form through a column-major copy; the taus land in
// the output directly.
std::optional<SolverKernel> geqrf_kernel(const OpKernelRequest& r, std::string* why) {
  const ir::ValueType& a = *r.inputs[0];
  if (refuse(a, why) || refuse_empty(a, why)) return std::nullopt;
  const int64_t m = a.shape[static_cast<size_t>(a.rank() - 2)], n = a.shape.back(), k = std::min(m, n);
  const int64_t batch = matrices_of(a);
  auto in = grid_kernel(r.op, a.dtype, to_column_major(batch, m, n, m * n), "geqrf's column-major copy");
  auto out = grid_kernel(r.op, a.dtype, from_column_major(batch, m, n, m, m * n), "geqrf's row-major result");
  SolverCall plan = factor_call(SolverCall::Routine::geqrf, a.dtype, batch, m, n);
  plan.lda = m;
  plan.stride_a = m * n;
  plan.stride_b = k;
  SolverKernel result{nullptr, {*in, *out}};
  result.run = [=](const KernelCall& call) {
    runtime::Device& device = cuda_device_here("geqrf");
    runtime::BufferPtr scratch = runtime::make_buffer(call.outputs[0].type->num_bytes());
    runtime::BufferPtr info = runtime::make_buffer(static_cast<size_t>(batch) * sizeof(int32_t));
    launch(device, *in, {call.inputs[0].data}, {scratch->data()});
    SolverCall c = plan;
    c.a = scratch->data();
    c.b = call.outputs[1].data;
    c.info = static_cast<int32_t*>(info->data());
    cuda_driver().solver(device.id(), c);
    launch(device, *out, {scratch->data()}, {call.outputs[0].data});
  };
  return result;
}

// householder_product: orgqr on a column-major copy of the reflectors.
std::optional<SolverKernel> householder_product_kernel(const OpKernelRequest& r, std::string* why) {
  const ir::ValueType& a = *r.inputs[0];
  if (refuse(a, why) || refuse_empty(a, why)) return std::nullopt;
  const int64_t m = a.shape[static_cast<size_t>(a.rank() - 2)], n = a.shape.back(), k = r.inputs[1]->shape.back();
  const int64_t batch = matrices_of(a);
  auto in = grid_kernel(r.op, a.dtype, to_column_major(batch, m, n, m * n), "householder_product's column-major copy");
  auto out = grid_kernel(r.op, a.dtype, from_column_major(batch, m, n, m, m * n), "householder_product's q");
  SolverCall plan = factor_call(SolverCall::Routine::orgqr, a.dtype, batch, m, n);
  plan.k = k;
  plan.lda = m;
  plan.stride_a = m * n;
  plan.stride_b = k;
  SolverKernel result{nullptr, {*in, *out}};
  result.run = [=](const KernelCall& call) {
    runtime::Device& device = cuda_device_here("householder_product");
    runtime::BufferPtr scratch = runtime::make_buffer(call.outputs[0].type->num_bytes());
    runtime::BufferPtr info = runtime::make_buffer(static_cast<size_t>(batch) * sizeof(int32_t));
    launch(device, *in, {call.inputs[0].data}, {scratch->data()});
    SolverCall c = plan;
    c.a = scratch->data();
    c.b = const_cast<void*>(call.inputs[1].data);
    c.info = static_cast<int32_t*>(info->data());
    cuda_driver().solver(device.id(), c);
    launch(device, *out, {scratch->data()}, {call.outputs[0].data});
  };
  return result;
}

// qr: geqrf and orgqr on one column-major copy wide enough for q; r is its
// upper triangle, read between the two.
std::optional<SolverKernel> qr_kernel(const OpKernelRequest& r, std::string* why) {
  const ir::ValueType& a = *r.inputs[0];
  if (refuse(a, why) || refuse_empty(a, why)) return std::nullopt;
  const int64_t m = a.shape[static_cast<size_t>(a.rank() - 2)], n = a.shape.back(), k = std::min(m, n);
  const int64_t q_cols = r.outputs[0]->shape.back(), r_rows = r.outputs[1]->shape[static_cast<size_t>(a.rank() - 2)];
  const int64_t batch = matrices_of(a), width = m * std::max(n, q_cols);
  auto in = grid_kernel(r.op, a.dtype, to_column_major(batch, m, n, width), "qr's column-major copy");
  Grid r_grid{batch, r_rows, n, width, 1, m, r_rows * n, /*upper_only=*/true};
  auto r_out = grid_kernel(r.op, a.dtype, r_grid, "qr's r");
  auto q_out = grid_kernel(r.op, a.dtype, from_column_major(batch, m, q_cols, m, width), "qr's q");
  SolverCall geqrf = factor_call(SolverCall::Routine::geqrf, a.dtype, batch, m, n);
  geqrf.lda = m;
  geqrf.stride_a = width;
  geqrf.stride_b = k;
  SolverCall orgqr = geqrf;
  orgqr.routine = SolverCall::Routine::orgqr;
  orgqr.n = q_cols;
  orgqr.k = k;
  const size_t dsize = a.dtype == DType::f64 ? 8 : 4;
  SolverKernel result{nullptr, {*in, *r_out, *q_out}};
  result.run = [=](const KernelCall& call) {
    runtime::Device& device = cuda_device_here("qr");
    runtime::BufferPtr scratch = runtime::make_buffer(static_cast<size_t>(batch * width) * dsize);
    runtime::BufferPtr tau = runtime::make_buffer(static_cast<size_t>(batch * k) * dsize);
    runtime::BufferPtr info = runtime::make_buffer(static_cast<size_t>(batch) * sizeof(int32_t));
    launch(device, *in, {call.inputs[0].data}, {scratch->data()});
    for (SolverCall c : {geqrf, orgqr}) {
      c.a = scratch->data();
      c.b = tau->data();
      c.info = static_cast<int32_t*>(info->data());
      cuda_driver().solver(device.id(), c);
      if (c.routine == SolverCall::Routine::geqrf) launch(device, *r_out, {scratch->data()}, {call.outputs[1].data});
    }
    launch(device, *q_out, {scratch->data()}, {call.outputs[0].data});
  };
  return result;
}

// svd: gesvd takes m >= n. A wide a's buffer is already the column-major
// tall a^T = v s u^T: its u' is graft's vt and its vt' graft's u, written in
// place. A tall a goes through a column-major copy, and u and vt come back
// row-major.
std::optional<SolverKernel> svd_kernel(const OpKernelRequest& r, std::string* why) {
  const ir::ValueType& a = *r.inputs[0];
  if (refuse(a, why) || refuse_empty(a, why)) return std::nullopt;
  const int64_t m = a.shape[static_cast<size_t>(a.rank() - 2)], n = a.shape.back(), k = std::min(m, n);
  const bool uv = ir::attr<int64_t>(r.attrs, "compute_uv", r.op) != 0;
  const bool full = ir::attr<int64_t>(r.attrs, "full_matrices", r.op) != 0;
  const int64_t batch = matrices_of(a);
  const size_t dsize = a.dtype == DType::f64 ? 8 : 4;
  const int64_t u_cols = uv ? r.outputs[1]->shape.back() : 0;
  const int64_t vt_rows = uv ? r.outputs[2]->shape[static_cast<size_t>(a.rank() - 2)] : 0;
  const bool tall = m >= n;
  SolverCall plan = factor_call(SolverCall::Routine::gesvd, a.dtype, batch, tall ? m : n, tall ? n : m);
  plan.job = !uv ? 'N' : full ? 'A' : 'S';
  plan.lda = plan.m;
  plan.stride_a = m * n;
  plan.stride_b = k;
  SolverKernel result{nullptr, {}};
  std::shared_ptr<const CudaKernel> in, u_out, vt_out;
  if (tall) {
    in = grid_kernel(r.op, a.dtype, to_column_major(batch, m, n, m * n), "svd's column-major copy");
    result.kernels.push_back(*in);
    if (uv) {
      u_out = grid_kernel(r.op, a.dtype, from_column_major(batch, m, u_cols, m, m * u_cols), "svd's u");
      vt_out = grid_kernel(r.op, a.dtype, from_column_major(batch, vt_rows, n, vt_rows, vt_rows * n), "svd's vt");
      result.kernels.push_back(*u_out);
      result.kernels.push_back(*vt_out);
    }
    plan.ldu = m;
    plan.stride_u = m * u_cols;
    plan.ldvt = vt_rows;
    plan.stride_vt = vt_rows * n;
  } else {
    plan.ldu = n;  // a^T's u (n x vt_rows), column-major: graft's vt
    plan.stride_u = vt_rows * n;
    plan.ldvt = u_cols;  // a^T's vt (u_cols x m), column-major: graft's u
    plan.stride_vt = m * u_cols;
  }
  result.run = [=](const KernelCall& call) {
    runtime::Device& device = cuda_device_here("svd");
    runtime::BufferPtr scratch = runtime::make_buffer(static_cast<size_t>(batch * m * n) * dsize);
    runtime::BufferPtr info = runtime::make_buffer(static_cast<size_t>(batch) * sizeof(int32_t));
    runtime::BufferPtr u, vt;
    SolverCall c = plan;
    c.a = scratch->data();
    c.b = call.outputs[0].data;
    c.info = static_cast<int32_t*>(info->data());
    if (tall) {
      launch(device, *in, {call.inputs[0].data}, {scratch->data()});
      if (uv) {
        u = runtime::make_buffer(call.outputs[1].type->num_bytes());
        vt = runtime::make_buffer(call.outputs[2].type->num_bytes());
        c.u = u->data();
        c.vt = vt->data();
      }
    } else {
      device.transfers()->within(scratch->data(), call.inputs[0].data, static_cast<size_t>(batch * m * n) * dsize);
      if (uv) {
        c.u = call.outputs[2].data;
        c.vt = call.outputs[1].data;
      }
    }
    cuda_driver().solver(device.id(), c);
    if (tall && uv) {
      launch(device, *u_out, {u->data()}, {call.outputs[1].data});
      launch(device, *vt_out, {vt->data()}, {call.outputs[2].data});
    }
  };
  return result;
}

// cholesky: L in the lower triangle, zeros above; where potrf failed, NaNs in the lower triangle.
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
      "    p.out0[t] = j > i ? (", ctype(a.dtype), ")0 : (p.in1[b] != 0 ? ", nan_of(a.dtype), " : p.in0[t]);\n  }\n");
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
  switch (op) {
    case ir::Op::cholesky:
    case ir::Op::eigh:
    case ir::Op::triangular_solve:
    case ir::Op::lu:
    case ir::Op::qr:
    case ir::Op::svd:
    case ir::Op::geqrf:
    case ir::Op::householder_product: return true;
    default: return false;
  }
}

std::optional<SolverKernel> solver_kernel(const OpKernelRequest& request, std::string* why) {
  std::string ignored;
  if (!why) why = &ignored;
  switch (request.op) {
    case ir::Op::cholesky: return cholesky_kernel(request, why);
    case ir::Op::eigh: return eigh_kernel(request, why);
    case ir::Op::triangular_solve: return triangular_solve_kernel(request, why);
    case ir::Op::lu: return lu_kernel(request, why);
    case ir::Op::qr: return qr_kernel(request, why);
    case ir::Op::svd: return svd_kernel(request, why);
    case ir::Op::geqrf: return geqrf_kernel(request, why);
    case ir::Op::householder_product: return householder_product_kernel(request, why);
    default: *why = std::string(ir::op_name(request.op)) + " has no cuSOLVER kernel"; return std::nullopt;
  }
}

}  // namespace graft::codegen::cuda
