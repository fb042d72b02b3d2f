// CPU kernels of the spectral decompositions, per matrix of a batch (leading
// axes): eigh (each symmetric matrix read from its `lower` or upper triangle;
// eigenvalues ascending, orthonormal eigenvectors in v's columns) and svd
// (singular values descending, a = u diag(s) vt). LAPACK's syevd and gesdd
// at every size (as JAX's and NumPy's: the same algorithms, signs and
// roundings), small matrices of a batch in parallel (LAPACK single-threaded
// in each), large ones one after another with LAPACK's own threads; Eigen's
// solvers only in a build without OpenBLAS. A matrix whose iteration does
// not converge gives NaNs, as JAX's.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#ifdef GRAFT_HAVE_OPENBLAS
#include <cblas.h>
#else
#include <Eigen/Core>
#include <Eigen/Eigenvalues>
#include <Eigen/SVD>
#endif

#include "graft/errors.h"
#include "interpreter/blas_core.h"
#include "interpreter/kernel.h"
#include "interpreter/kernels/loops.h"

#ifdef GRAFT_HAVE_OPENBLAS
extern "C" void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w,
                        double* work, const int* lwork, int* iwork, const int* liwork, int* info);
extern "C" void ssyevd_(const char* jobz, const char* uplo, const int* n, float* a, const int* lda, float* w,
                        float* work, const int* lwork, int* iwork, const int* liwork, int* info);
extern "C" void dgesdd_(const char* jobz, const int* m, const int* n, double* a, const int* lda, double* s, double* u,
                        const int* ldu, double* vt, const int* ldvt, double* work, const int* lwork, int* iwork,
                        int* info);
extern "C" void sgesdd_(const char* jobz, const int* m, const int* n, float* a, const int* lda, float* s, float* u,
                        const int* ldu, float* vt, const int* ldvt, float* work, const int* lwork, int* iwork,
                        int* info);
#endif

namespace graft::interpreter {
namespace {

// Matrices from this many rows run one after another, LAPACK threading each.
constexpr int64_t kSerialMin = 128;

#ifdef GRAFT_HAVE_OPENBLAS
// LAPACK's syevd for one precision, its workspace sized by a query on first use.
template <class T>
int syevd(const char* uplo, int n, T* a, T* w, std::vector<T>& work, std::vector<int>& iwork) {
  int info = 0, lwork = -1, liwork = -1, iwork_size = 0;
  T work_size = 0;
  auto call = [&](T* wk, const int* lw, int* iw, const int* liw) {
    if constexpr (std::is_same_v<T, double>)
      dsyevd_("V", uplo, &n, a, &n, w, wk, lw, iw, liw, &info);
    else
      ssyevd_("V", uplo, &n, a, &n, w, wk, lw, iw, liw, &info);
  };
  if (work.empty()) {
    call(&work_size, &lwork, &iwork_size, &liwork);
    work.resize(static_cast<size_t>(work_size) + 1);
    iwork.resize(static_cast<size_t>(std::max(iwork_size, 1)));
  }
  lwork = static_cast<int>(work.size());
  liwork = static_cast<int>(iwork.size());
  call(work.data(), &lwork, iwork.data(), &liwork);
  return info;
}
#endif

template <class T>
void eigh_typed(const KernelCall& call) {
  const ir::ValueType& t = *call.inputs[0].type;
  const int64_t n = t.shape.back();
  const int64_t size = n * n, batches = n == 0 ? 0 : t.num_elements() / size;
  const bool lower = int_attr(call, "lower") != 0;
  const T* in = static_cast<const T*>(call.inputs[0].data);
  T* v_out = static_cast<T*>(call.outputs[0].data);
  T* w_out = static_cast<T*>(call.outputs[1].data);
  constexpr T kNaN = std::numeric_limits<T>::quiet_NaN();
  if (batches == 0) return;
#ifdef GRAFT_HAVE_OPENBLAS
  if (n > 0x7fffffff) throw Error("eigh: matrices over 2^31 - 1 rows are beyond LAPACK's ints");
  ensure_blas_core();
  const int ni = static_cast<int>(n);
  // Matrices [begin, end) of the batch, with this thread's workspace.
  auto run = [&](int64_t begin, int64_t end) {
    std::vector<T> col(static_cast<size_t>(size)), work;
    std::vector<int> iwork;
    for (int64_t b = begin; b < end; ++b) {
      // Column-major a, the triangle JAX's eigh passes (so the eigenvectors' signs are its).
      if constexpr (std::is_same_v<T, double>)
        cblas_domatcopy(CblasRowMajor, CblasTrans, ni, ni, 1.0, in + b * size, ni, col.data(), ni);
      else
        cblas_somatcopy(CblasRowMajor, CblasTrans, ni, ni, 1.0f, in + b * size, ni, col.data(), ni);
      const int info = syevd<T>(lower ? "L" : "U", ni, col.data(), w_out + b * n, work, iwork);
      if (info != 0) {
        std::fill(v_out + b * size, v_out + (b + 1) * size, kNaN);
        std::fill(w_out + b * n, w_out + (b + 1) * n, kNaN);
        continue;
      }
      // The eigenvectors are column-major columns: row-major v is their transpose.
      if constexpr (std::is_same_v<T, double>)
        cblas_domatcopy(CblasRowMajor, CblasTrans, ni, ni, 1.0, col.data(), ni, v_out + b * size, ni);
      else
        cblas_somatcopy(CblasRowMajor, CblasTrans, ni, ni, 1.0f, col.data(), ni, v_out + b * size, ni);
    }
  };
  over_batches(batches, parallel_batches(batches, size * n * 4) && n < kSerialMin, run);
#else
  using RowMajor = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
#pragma omp parallel for schedule(static) if (parallel_batches(batches, size * n * 4))
  for (int64_t b = 0; b < batches; ++b) {
    const Eigen::Map<const RowMajor> a(in + b * size, n, n);
    // Eigen's solver reads the lower triangle; a's upper one is a^T's lower.
    Eigen::SelfAdjointEigenSolver<RowMajor> es;
    if (lower)
      es.compute(a, Eigen::ComputeEigenvectors);
    else
      es.compute(a.transpose(), Eigen::ComputeEigenvectors);
    Eigen::Map<RowMajor> v(v_out + b * size, n, n);
    Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, 1>> w(w_out + b * n, n);
    if (es.info() != Eigen::Success) {
      v.setConstant(kNaN);
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
  const T* in = static_cast<const T*>(call.inputs[0].data);
  T* s_out = static_cast<T*>(call.outputs[0].data);
  T* u_out = uv ? static_cast<T*>(call.outputs[1].data) : nullptr;
  T* vt_out = uv ? static_cast<T*>(call.outputs[2].data) : nullptr;
  constexpr T kNaN = std::numeric_limits<T>::quiet_NaN();
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
  const char* jobz = !uv ? "N" : full ? "A" : "S";
  auto run = [&](int64_t begin, int64_t end) {
    std::vector<T> a(static_cast<size_t>(size)), u_col(static_cast<size_t>(uv ? u_size : 1)),
        vt_col(static_cast<size_t>(uv ? vt_size : 1)), work;
    std::vector<int> iwork(static_cast<size_t>(8 * k));
    int info = 0;
    auto gesdd = [&](T* s, T* wk, int lwork) {
      if constexpr (std::is_same_v<T, double>)
        dgesdd_(jobz, &mi, &ni, a.data(), &mi, s, u_col.data(), &mi, vt_col.data(), &vrows, wk, &lwork, iwork.data(),
                &info);
      else
        sgesdd_(jobz, &mi, &ni, a.data(), &mi, s, u_col.data(), &mi, vt_col.data(), &vrows, wk, &lwork, iwork.data(),
                &info);
    };
    T work_size = 0;
    gesdd(s_out, &work_size, -1);
    work.resize(static_cast<size_t>(work_size) + 1);
    for (int64_t b = begin; b < end; ++b) {
      T* u = uv ? u_out + b * u_size : nullptr;
      T* vt = uv ? vt_out + b * vt_size : nullptr;
      if constexpr (std::is_same_v<T, double>)
        cblas_domatcopy(CblasRowMajor, CblasTrans, mi, ni, 1.0, in + b * size, ni, a.data(), mi);
      else
        cblas_somatcopy(CblasRowMajor, CblasTrans, mi, ni, 1.0f, in + b * size, ni, a.data(), mi);
      gesdd(s_out + b * k, work.data(), static_cast<int>(work.size()));
      if (info != 0) {
        std::fill(s_out + b * k, s_out + (b + 1) * k, kNaN);
        if (uv) {
          std::fill(u, u + u_size, kNaN);
          std::fill(vt, vt + vt_size, kNaN);
        }
        continue;
      }
      if (!uv) continue;
      if constexpr (std::is_same_v<T, double>) {
        cblas_domatcopy(CblasRowMajor, CblasTrans, ucols, mi, 1.0, u_col.data(), mi, u, ucols);
        cblas_domatcopy(CblasRowMajor, CblasTrans, ni, vrows, 1.0, vt_col.data(), vrows, vt, ni);
      } else {
        cblas_somatcopy(CblasRowMajor, CblasTrans, ucols, mi, 1.0f, u_col.data(), mi, u, ucols);
        cblas_somatcopy(CblasRowMajor, CblasTrans, ni, vrows, 1.0f, vt_col.data(), vrows, vt, ni);
      }
    }
  };
  over_batches(batches, parallel_batches(batches, size * k * 4) && std::max(m, n) < kSerialMin, run);
#else
  using RowMajor = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
#pragma omp parallel for schedule(static) if (parallel_batches(batches, size * k * 4))
  for (int64_t b = 0; b < batches; ++b) {
    const Eigen::Map<const RowMajor> a(in + b * size, m, n);
    const unsigned options = !uv    ? 0u
                             : full ? (Eigen::ComputeFullU | Eigen::ComputeFullV)
                                    : (Eigen::ComputeThinU | Eigen::ComputeThinV);
    Eigen::BDCSVD<RowMajor> svd(a, options);
    Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, 1>>(s_out + b * k, k) = svd.singularValues();
    if (uv) {
      Eigen::Map<RowMajor>(u_out + b * u_size, m, u_cols) = svd.matrixU();
      Eigen::Map<RowMajor>(vt_out + b * vt_size, vt_rows, n) = svd.matrixV().transpose();
    }
  }
#endif
}

}  // namespace

void eigh_kernel(const KernelCall& call) {
  if (call.inputs[0].type->dtype == DType::f64)
    eigh_typed<double>(call);
  else
    eigh_typed<float>(call);
}

void svd_kernel(const KernelCall& call) {
  if (call.inputs[0].type->dtype == DType::f64)
    svd_typed<double>(call);
  else
    svd_typed<float>(call);
}

}  // namespace graft::interpreter
