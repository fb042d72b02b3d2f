// CPU kernels of the spectral decompositions, per matrix of a batch (leading
// axes): eigh (each symmetric matrix read from its `lower` or upper triangle;
// eigenvalues ascending, orthonormal eigenvectors in v's columns) and svd
// (singular values descending, a = u diag(s) vt). LAPACK's syevd and gesdd
// at every size (as JAX's and NumPy's: the same algorithms, signs and
// roundings), small matrices of a batch in parallel (LAPACK single-threaded
// in each), large ones one after another with LAPACK's own threads; Eigen's
// solvers only in a build without OpenBLAS. A matrix whose iteration does
// not converge gives NaNs, as JAX's. Written once for f32, f64, c64 and c128
// (interpreter/lapack_calls.h): a complex matrix is Hermitian to eigh, and
// its eigenvalues and singular values are real.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include <complex>

#ifndef GRAFT_HAVE_OPENBLAS
#include <Eigen/Core>
#include <Eigen/Eigenvalues>
#include <Eigen/SVD>
#endif

#include "graft/errors.h"
#include "interpreter/blas_core.h"
#include "interpreter/kernel.h"
#include "interpreter/kernels/loops.h"

#ifdef GRAFT_HAVE_OPENBLAS
#include "interpreter/lapack_calls.h"
#endif

namespace graft::interpreter {
namespace {

// The real type of T (float for std::complex<float>).
template <class T>
using RealOf = decltype(std::real(T{}));

template <class T>
void eigh_typed(const KernelCall& call) {
  const ir::ValueType& t = *call.inputs[0].type;
  const int64_t n = t.shape.back();
  const int64_t size = n * n, batches = n == 0 ? 0 : t.num_elements() / size;
  const bool lower = int_attr(call, "lower") != 0;
  const T* in = static_cast<const T*>(call.inputs[0].data);
  using R = RealOf<T>;
  T* v_out = static_cast<T*>(call.outputs[0].data);
  R* w_out = static_cast<R*>(call.outputs[1].data);
  constexpr R kNaN = std::numeric_limits<R>::quiet_NaN();
  if (batches == 0) return;
#ifdef GRAFT_HAVE_OPENBLAS
  if (n > 0x7fffffff) throw Error("eigh: matrices over 2^31 - 1 rows are beyond LAPACK's ints");
  ensure_blas_core();
  const int ni = static_cast<int>(n);
  // Matrices [begin, end) of the batch, with this thread's workspace.
  auto run = [&](int64_t begin, int64_t end) {
    std::vector<T> col(static_cast<size_t>(size));
    lapack::Workspace<T> ws;
    for (int64_t b = begin; b < end; ++b) {
      // Column-major a, the triangle JAX's eigh passes (so the eigenvectors' signs are its).
      lapack::transpose_copy(ni, ni, in + b * size, ni, col.data(), ni);
      const int info = lapack::heevd('V', lower ? 'L' : 'U', ni, col.data(), ni, w_out + b * n, ws);
      if (info != 0) {
        std::fill(v_out + b * size, v_out + (b + 1) * size, T(kNaN));
        std::fill(w_out + b * n, w_out + (b + 1) * n, kNaN);
        continue;
      }
      // The eigenvectors are column-major columns: row-major v is their transpose.
      lapack::transpose_copy(ni, ni, col.data(), ni, v_out + b * size, ni);
    }
  };
  over_batches(batches, n < kThreadedLapackMin, run);
#else
  using RowMajor = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
#pragma omp parallel for schedule(static) if (parallel_batches(batches, size * n * 4))
  for (int64_t b = 0; b < batches; ++b) {
    const Eigen::Map<const RowMajor> a(in + b * size, n, n);
    // Eigen's solver reads the lower triangle; a's upper one is a^H's lower.
    Eigen::SelfAdjointEigenSolver<RowMajor> es;
    if (lower)
      es.compute(a, Eigen::ComputeEigenvectors);
    else
      es.compute(a.adjoint(), Eigen::ComputeEigenvectors);
    Eigen::Map<RowMajor> v(v_out + b * size, n, n);
    Eigen::Map<Eigen::Matrix<R, Eigen::Dynamic, 1>> w(w_out + b * n, n);
    if (es.info() != Eigen::Success) {
      v.setConstant(T(kNaN));
      w.setConstant(kNaN);
      continue;
    }
    v = es.eigenvectors();
    w = es.eigenvalues();
  }
#endif
}

template <class T>
void svd_typed(const KernelCall& call) {
  const ir::ValueType& t = *call.inputs[0].type;
  const int64_t m = t.shape[t.rank() - 2], n = t.shape[t.rank() - 1], k = std::min(m, n);
  const bool uv = int_attr(call, "compute_uv") != 0, full = int_attr(call, "full_matrices") != 0;
  const int64_t u_cols = full ? m : k, vt_rows = full ? n : k;
  int64_t batches = 1;
  for (int i = 0; i + 2 < t.rank(); ++i) batches *= t.shape[static_cast<size_t>(i)];
  const int64_t size = m * n, u_size = m * u_cols, vt_size = vt_rows * n;
  using R = RealOf<T>;
  const T* in = static_cast<const T*>(call.inputs[0].data);
  R* s_out = static_cast<R*>(call.outputs[0].data);
  T* u_out = uv ? static_cast<T*>(call.outputs[1].data) : nullptr;
  T* vt_out = uv ? static_cast<T*>(call.outputs[2].data) : nullptr;
  constexpr R kNaN = std::numeric_limits<R>::quiet_NaN();
  if (k == 0) {  // no singular values: u and vt are identities (or empty)
    for (int64_t b = 0; b < batches && uv; ++b) {
      std::fill(u_out + b * u_size, u_out + (b + 1) * u_size, T(0));
      std::fill(vt_out + b * vt_size, vt_out + (b + 1) * vt_size, T(0));
      for (int64_t i = 0; i < u_cols; ++i) u_out[b * u_size + i * u_cols + i] = 1;
      for (int64_t i = 0; i < vt_rows; ++i) vt_out[b * vt_size + i * n + i] = 1;
    }
    return;
  }
#ifdef GRAFT_HAVE_OPENBLAS
  if (m > 0x7fffffff || n > 0x7fffffff)
    throw Error("svd: matrices over 2^31 - 1 rows or columns are beyond LAPACK's ints");
  ensure_blas_core();
  // LAPACK factors column-major a (transposed in and out, so the singular
  // vectors' signs are those JAX's and NumPy's gesdd give for a, not a^T).
  const int mi = static_cast<int>(m), ni = static_cast<int>(n), ucols = static_cast<int>(u_cols);
  const int vrows = static_cast<int>(std::max<int64_t>(vt_rows, 1));
  const char jobz = !uv ? 'N' : full ? 'A' : 'S';
  auto run = [&](int64_t begin, int64_t end) {
    std::vector<T> a(static_cast<size_t>(size)), u_col(static_cast<size_t>(uv ? u_size : 1)),
        vt_col(static_cast<size_t>(uv ? vt_size : 1));
    lapack::Workspace<T> ws;
    for (int64_t b = begin; b < end; ++b) {
      T* u = uv ? u_out + b * u_size : nullptr;
      T* vt = uv ? vt_out + b * vt_size : nullptr;
      lapack::transpose_copy(mi, ni, in + b * size, ni, a.data(), mi);
      const int info =
          lapack::gesdd(jobz, mi, ni, a.data(), mi, s_out + b * k, u_col.data(), mi, vt_col.data(), vrows, ws);
      if (info != 0) {
        std::fill(s_out + b * k, s_out + (b + 1) * k, kNaN);
        if (uv) {
          std::fill(u, u + u_size, T(kNaN));
          std::fill(vt, vt + vt_size, T(kNaN));
        }
        continue;
      }
      if (!uv) continue;
      lapack::transpose_copy(ucols, mi, u_col.data(), mi, u, ucols);
      lapack::transpose_copy(ni, vrows, vt_col.data(), vrows, vt, ni);
    }
  };
  over_batches(batches, std::max(m, n) < kThreadedLapackMin, run);
#else
  using RowMajor = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
#pragma omp parallel for schedule(static) if (parallel_batches(batches, size * k * 4))
  for (int64_t b = 0; b < batches; ++b) {
    const Eigen::Map<const RowMajor> a(in + b * size, m, n);
    const unsigned options = !uv    ? 0u
                             : full ? (Eigen::ComputeFullU | Eigen::ComputeFullV)
                                    : (Eigen::ComputeThinU | Eigen::ComputeThinV);
    Eigen::BDCSVD<RowMajor> svd(a, options);
    Eigen::Map<Eigen::Matrix<R, Eigen::Dynamic, 1>>(s_out + b * k, k) = svd.singularValues();
    if (uv) {
      Eigen::Map<RowMajor>(u_out + b * u_size, m, u_cols) = svd.matrixU();
      Eigen::Map<RowMajor>(vt_out + b * vt_size, vt_rows, n) = svd.matrixV().adjoint();
    }
  }
#endif
}

}  // namespace

namespace {
// f(T{}) for the operand's dtype: f32, f64, c64 or c128 (the shape rules admit no other).
template <class F>
void for_lapack_dtype(const KernelCall& call, const F& f) {
  switch (call.inputs[0].type->dtype) {
    case DType::f32: return f(float{});
    case DType::f64: return f(double{});
    case DType::c64: return f(std::complex<float>{});
    case DType::c128: return f(std::complex<double>{});
    default:
      throw UnsupportedError(std::string(ir::op_name(call.op)) + ": no kernel for " +
                             dtype_name(call.inputs[0].type->dtype));
  }
}
}  // namespace

void eigh_kernel(const KernelCall& call) {
  for_lapack_dtype(call, [&](auto tag) { eigh_typed<decltype(tag)>(call); });
}

void svd_kernel(const KernelCall& call) {
  for_lapack_dtype(call, [&](auto tag) { svd_typed<decltype(tag)>(call); });
}

}  // namespace graft::interpreter
