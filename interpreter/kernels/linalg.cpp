// CPU kernel of dot_general: operands are brought to [batch, free, contract]
// / [batch, contract, free] order (a transpose only when the axes are not
// already there), then each batch is one GEMM through OpenBLAS or Eigen (or,
// with nothing to contract, an outer product); bf16 products on the CPU's
// bf16 instructions through oneDNN where it has them (onednn_products.h).
#include <Eigen/Core>
#include <numeric>

#ifdef GRAFT_HAVE_OPENBLAS
#include <cblas.h>
#endif

#include "interpreter/blas_core.h"
#include "interpreter/kernels/layout.h"
#include "interpreter/kernels/loops.h"
#include "interpreter/kernels/scalar_ops.h"
#include "interpreter/onednn_products.h"
#include "ir/attr_access.h"

// GCC 12 at -O3 reports a false -Wfree-nonheap-object on StridedWalk's
// vectors once inlined into permute (GCC bug 105651's family); nothing here
// frees a non-heap pointer.
#pragma GCC diagnostic ignored "-Wfree-nonheap-object"

namespace graft::interpreter {
namespace {

using ir::Ints;

#ifdef GRAFT_HAVE_OPENBLAS

// C[M,N] = op(A) op(B), row-major; op transposes when the operand is stored
// the other way round (A as [K,M], B as [N,K]), so no copy is made for it.
void gemm(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k, bool ta, bool tb) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, static_cast<blasint>(m),
              static_cast<blasint>(n), static_cast<blasint>(k), 1.0f, a, static_cast<blasint>(ta ? m : k), b,
              static_cast<blasint>(tb ? k : n), 0.0f, c, static_cast<blasint>(n));
}
void gemm(const double* a, const double* b, double* c, int64_t m, int64_t n, int64_t k, bool ta, bool tb) {
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, static_cast<blasint>(m),
              static_cast<blasint>(n), static_cast<blasint>(k), 1.0, a, static_cast<blasint>(ta ? m : k), b,
              static_cast<blasint>(tb ? k : n), 0.0, c, static_cast<blasint>(n));
}
#endif

// Copies x (shape `shape`) into `out` with its axes ordered as `perm`.
template <class T>
void permute(const T* x, const Shape& shape, const std::vector<int64_t>& perm, std::vector<T>& out) {
  std::vector<int64_t> strides = row_major_strides(shape), pstrides(perm.size());
  Shape pshape(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    pshape[i] = shape[perm[i]];
    pstrides[i] = strides[perm[i]];
  }
  int64_t n = 1;
  for (int64_t d : pshape) n *= d;
  out.resize(n);
  StridedWalk walk(pshape, pstrides);
  for (int64_t i = 0; i < n; ++i, walk.next()) out[i] = x[walk.offset()];
}

// Whether reading x (shape `shape`) with its axes ordered as perm is the
// same as reading it in place: only axes of size 1 move.
bool keeps_layout(const Shape& shape, const std::vector<int64_t>& perm) {
  int64_t last = -1;
  for (int64_t axis : perm) {
    if (shape[axis] == 1) continue;
    if (axis < last) return false;
    last = axis;
  }
  return true;
}

// How dot_general's operands map onto a batch of GEMMs: B products of
// [M,K] by [K,N]; aperm/bperm order each operand's axes as [batch, free,
// contract] / [batch, contract, free]. An operand stored the other way
// round within each batch is read transposed in place (ta, tb); one stored
// otherwise must be copied into order (copy_a, copy_b).
struct DotLayout {
  int64_t B = 1, M = 1, N = 1, K = 1;
  std::vector<int64_t> aperm, bperm;
  bool ta = false, tb = false, copy_a = false, copy_b = false;
};

DotLayout dot_layout(const KernelCall& call) {
  const Shape& a_shape = call.inputs[0].type->shape;
  const Shape& b_shape = call.inputs[1].type->shape;
  const Ints& lc = ir::attr<Ints>(call.attrs, "lhs_contracting", call.op);
  const Ints& rc = ir::attr<Ints>(call.attrs, "rhs_contracting", call.op);
  const Ints& lb = ir::attr<Ints>(call.attrs, "lhs_batch", call.op);
  const Ints& rb = ir::attr<Ints>(call.attrs, "rhs_batch", call.op);

  auto free_axes = [](int rank, const Ints& x, const Ints& y) {
    std::vector<int64_t> f;
    for (int i = 0; i < rank; ++i)
      if (std::find(x.begin(), x.end(), i) == x.end() && std::find(y.begin(), y.end(), i) == y.end()) f.push_back(i);
    return f;
  };
  std::vector<int64_t> lf = free_axes(static_cast<int>(a_shape.size()), lc, lb);
  std::vector<int64_t> rf = free_axes(static_cast<int>(b_shape.size()), rc, rb);
  DotLayout d;
  for (int64_t i : lb) d.B *= a_shape[i];
  for (int64_t i : lf) d.M *= a_shape[i];
  for (int64_t i : rf) d.N *= b_shape[i];
  for (int64_t i : lc) d.K *= a_shape[i];

  auto concat = [](std::initializer_list<const std::vector<int64_t>*> parts) {
    std::vector<int64_t> v;
    for (const auto* p : parts)
      for (int64_t x : *p) v.push_back(x);
    return v;
  };
  d.aperm = concat({&lb, &lf, &lc});
  d.bperm = concat({&rb, &rc, &rf});
  d.ta = !keeps_layout(a_shape, d.aperm) && keeps_layout(a_shape, concat({&lb, &lc, &lf}));
  d.tb = !keeps_layout(b_shape, d.bperm) && keeps_layout(b_shape, concat({&rb, &rf, &rc}));
  d.copy_a = !d.ta && !keeps_layout(a_shape, d.aperm);
  d.copy_b = !d.tb && !keeps_layout(b_shape, d.bperm);
  return d;
}

// Operand i's elements as T, copied into `perm` order in buf when `copy`.
template <class T>
const T* operand_in_order(const KernelCall& call, size_t i, bool copy, const std::vector<int64_t>& perm,
                          std::vector<T>& buf) {
  const T* x = static_cast<const T*>(call.inputs[i].data);
  if (!copy) return x;
  permute(x, call.inputs[i].type->shape, perm, buf);
  return buf.data();
}

template <class T>
void dot_typed(const KernelCall& call) {
  const DotLayout d = dot_layout(call);
  const int64_t B = d.B, M = d.M, N = d.N, K = d.K;
  const bool ta = d.ta, tb = d.tb;
  std::vector<T> a_buf, b_buf;
  const T* a = operand_in_order(call, 0, d.copy_a, d.aperm, a_buf);
  const T* b = operand_in_order(call, 1, d.copy_b, d.bperm, b_buf);
  T* y = out_ptr<T>(call, 0);
  if (K == 1) {
    // Nothing to sum (no contracting axes, or all of size 1): an outer
    // product per batch entry, each element one product as IEEE makes it. A
    // GEMM computes 0 + a*b, which turns a -0 product into +0 (and then
    // 1/x or rsqrt of it into +inf, not -inf). Either storage order of a
    // size-1 contraction is the same memory, so ta and tb do not matter.
#pragma omp parallel for schedule(static) if (B * M * N >= (int64_t{1} << 16))
    for (int64_t im = 0; im < B * M; ++im) {
      const int64_t i = im / M;
      const T x = a[im];
      const T* bi = b + i * N;
      T* yi = y + im * N;
      for (int64_t n = 0; n < N; ++n) yi[n] = x * bi[n];
    }
    return;
  }
#ifdef GRAFT_HAVE_OPENBLAS
  // BLAS for float GEMMs big enough to amortise its call; Eigen for the rest.
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    if (M * N * K >= kGemmMinWork && K > 0) {
      ensure_blas_core();  // the kernels for this CPU, not OpenBLAS's fallback
      // A batch of small products (attention's [128,64] by [64,128]): one
      // GEMM per thread at a time, batch entries spread over the threads.
      // Inside a parallel region OpenBLAS runs on the calling thread; a
      // threaded call per entry spent more time waking its threads than
      // multiplying (75 GFLOP/s on 2 cores). Each entry's bits are the same
      // either way: OpenBLAS splits a product's rows and columns, never its sums.
      constexpr int64_t kSmallGemmWork = int64_t{1} << 22;
#pragma omp parallel for schedule(static) if (B > 1 && M * N * K <= kSmallGemmWork)
      for (int64_t i = 0; i < B; ++i) gemm(a + i * M * K, b + i * K * N, y + i * M * N, M, N, K, ta, tb);
      return;
    }
  }
#endif
  using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  // Many small products (a vmapped matmul, per-example outer products) run
  // on all threads; each batch entry writes its own block of y.
#pragma omp parallel for schedule(static) if (B > 1 && B * M * N * std::max<int64_t>(K, 1) >= (int64_t{1} << 16))
  for (int64_t i = 0; i < B; ++i) {
    Eigen::Map<Mat> Y(y + i * M * N, M, N);
    if (K == 0) {
      Y.setZero();
      continue;
    }
    Eigen::Map<const Mat> A(a + i * M * K, ta ? K : M, ta ? M : K);
    Eigen::Map<const Mat> Bm(b + i * K * N, tb ? N : K, tb ? K : N);
    if (ta && tb) Y.noalias() = A.transpose() * Bm.transpose();
    else if (ta) Y.noalias() = A.transpose() * Bm;
    else if (tb) Y.noalias() = A * Bm.transpose();
    else Y.noalias() = A * Bm;
  }
}

}  // namespace

bool dot_general_bf16_native(const KernelCall& call) {
  if (!bf16_units_serve(call)) return false;
  const DType out = call.outputs[0].type->dtype;
  const DotLayout d = dot_layout(call);
  // Products too small to amortise a primitive's dispatch, and K = 1 (an
  // outer product, each element one rounding as IEEE makes it), widen to f32.
  if (d.K < 2 || d.M * d.N * d.K < kGemmMinWork) return false;
  std::vector<uint16_t> a_buf, b_buf;
  const uint16_t* a = operand_in_order(call, 0, d.copy_a, d.aperm, a_buf);
  const uint16_t* b = operand_in_order(call, 1, d.copy_b, d.bperm, b_buf);
  return bf16_matmul(d.B, d.M, d.N, d.K, a, b, d.ta, d.tb, call.outputs[0].data, out == DType::bf16);
}

void dot_general_kernel(const KernelCall& call) {
  // Complex products: Eigen's complex GEMM.
  if (call.inputs[0].type->dtype == DType::c64) return dot_typed<std::complex<float>>(call);
  if (call.inputs[0].type->dtype == DType::c128) return dot_typed<std::complex<double>>(call);
  visit_dtype(call.inputs[0].type->dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) throw UnsupportedError("dot_general: bool operands");
    // Signed integers multiply and add as their unsigned type: the same bits, wrapping (scalar_ops.h).
    else dot_typed<typename gcg_t<T>::u>(call);
  });
}

}  // namespace graft::interpreter
