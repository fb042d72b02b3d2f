// CPU kernels of cholesky, triangular_solve, lu and eigh, per matrix of a batch
// (leading axes): matrices from kLapackMin rows go to OpenBLAS's LAPACK
// (potrf, trsm; blocked and threaded, one matrix after another), smaller ones
// to Eigen on row-major maps with the batches in parallel (no call overhead,
// and bench/linalg measures Eigen ahead of LAPACK there).
//
// cholesky reads the lower triangle of each matrix and writes L (zeros above
// the diagonal); a matrix that is not positive definite gives a matrix of
// NaNs, as jax.lax.linalg.cholesky (so a caller can test for it without an
// exception in the middle of a jitted program). triangular_solve reads a's
// `lower` (or upper) triangle, its diagonal taken as ones with unit_diagonal,
// and solves op(a) x = b (left_side) or x op(a) = b, op(a) = a or a^T.
// lu factors each m x n matrix with partial pivoting as LAPACK's getrf (row
// j swapped with the row of the first largest |entry| in column j at or
// below it; a zero column is left as it is, so a singular matrix gives a U
// with a zero on its diagonal, not an error). eigh reads the `lower` (or
// upper) triangle and gives the eigenvalues ascending with orthonormal
// eigenvectors in the columns of v (LAPACK's syevd, Eigen's tridiagonal QR
// below 128 rows); one that does not converge gives NaNs, as JAX.
#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#ifdef GRAFT_HAVE_OPENBLAS
#include <cblas.h>
#endif

#include "interpreter/blas_core.h"
#include "interpreter/kernel.h"
#include "interpreter/kernels/loops.h"

#ifdef GRAFT_HAVE_OPENBLAS
// LAPACK's Cholesky factorization (OpenBLAS exports it; Debian ships no lapacke.h with it).
extern "C" void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info);
extern "C" void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info);
extern "C" void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
extern "C" void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
extern "C" void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w,
                        double* work, const int* lwork, int* iwork, const int* liwork, int* info);
extern "C" void ssyevd_(const char* jobz, const char* uplo, const int* n, float* a, const int* lda, float* w,
                        float* work, const int* lwork, int* iwork, const int* liwork, int* info);
#endif

namespace graft::interpreter {
namespace {

template <class T>
using RowMajor = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using MatMap = Eigen::Map<RowMajor<T>>;
template <class T>
using ConstMatMap = Eigen::Map<const RowMajor<T>>;

// Matrices from this many rows go to LAPACK.
constexpr int64_t kLapackMin = 128;

// Batches worth running in parallel: about 2^15 multiply-adds in all.
bool parallel_batches(int64_t batches, int64_t work_per_batch) {
  return batches > 1 && batches * work_per_batch >= (int64_t{1} << 15);
}

template <class T>
void cholesky_typed(const KernelCall& call) {
  const ir::ValueType& t = *call.inputs[0].type;
  const int64_t n = t.shape.back();
  const int64_t size = n * n, batches = n == 0 ? 0 : t.num_elements() / size;
  const T* in = static_cast<const T*>(call.inputs[0].data);
  T* out = static_cast<T*>(call.outputs[0].data);
#ifdef GRAFT_HAVE_OPENBLAS
  if (n >= kLapackMin && n <= 0x7fffffff) {
    ensure_blas_core();
    const int ni = static_cast<int>(n);
    for (int64_t k = 0; k < batches; ++k) {
      MatMap<T> l(out + k * size, n, n);
      l = ConstMatMap<T>(in + k * size, n, n).template triangularView<Eigen::Lower>();
      // Row-major L is column-major L^T: LAPACK's upper factor U = L^T of the same storage.
      int info = 0;
      if constexpr (std::is_same_v<T, double>)
        dpotrf_("U", &ni, l.data(), &ni, &info);
      else
        spotrf_("U", &ni, l.data(), &ni, &info);
      if (info != 0) l.setConstant(std::numeric_limits<T>::quiet_NaN());
    }
    return;
  }
#endif
#pragma omp parallel for schedule(static) if (parallel_batches(batches, size * n / 3))
  for (int64_t k = 0; k < batches; ++k) {
    MatMap<T> l(out + k * size, n, n);
    l = ConstMatMap<T>(in + k * size, n, n).template triangularView<Eigen::Lower>();
    Eigen::LLT<Eigen::Ref<RowMajor<T>>, Eigen::Lower> llt(l);  // in place: l's lower triangle becomes L
    if (llt.info() != Eigen::Success) {
      l.setConstant(std::numeric_limits<T>::quiet_NaN());
      continue;
    }
    l.template triangularView<Eigen::StrictlyUpper>().setZero();
  }
}

// x = op(a)^-1 b or b op(a)^-1 in place in x (holding b), a's triangle `Mode`.
template <int Mode, class T>
void solve_one(const ConstMatMap<T>& a, MatMap<T>& x, bool left, bool transpose) {
  if (left) {
    if (transpose)
      a.template triangularView<Mode>().transpose().solveInPlace(x);
    else
      a.template triangularView<Mode>().solveInPlace(x);
  } else {
    if (transpose)
      a.template triangularView<Mode>().transpose().template solveInPlace<Eigen::OnTheRight>(x);
    else
      a.template triangularView<Mode>().template solveInPlace<Eigen::OnTheRight>(x);
  }
}

template <class T>
void triangular_solve_typed(const KernelCall& call) {
  const ir::ValueType& at = *call.inputs[0].type;
  const ir::ValueType& bt = *call.inputs[1].type;
  const bool left = int_attr(call, "left_side") != 0, lower = int_attr(call, "lower") != 0;
  const bool transpose = int_attr(call, "transpose_a") != 0, unit = int_attr(call, "unit_diagonal") != 0;
  const int64_t m = at.shape.back();
  const int64_t rows = bt.shape[bt.rank() - 2], cols = bt.shape[bt.rank() - 1];
  const int64_t a_size = m * m, b_size = rows * cols;
  int64_t batches = 1;
  for (int i = 0; i + 2 < bt.rank(); ++i) batches *= bt.shape[static_cast<size_t>(i)];
  const T* a = static_cast<const T*>(call.inputs[0].data);
  const T* b = static_cast<const T*>(call.inputs[1].data);
  T* out = static_cast<T*>(call.outputs[0].data);
  if (b_size == 0) return;
#ifdef GRAFT_HAVE_OPENBLAS
  if (m >= kLapackMin && rows <= 0x7fffffff && cols <= 0x7fffffff) {
    ensure_blas_core();
    for (int64_t k = 0; k < batches; ++k) {
      T* x = out + k * b_size;
      std::copy(b + k * b_size, b + (k + 1) * b_size, x);
      const auto side = left ? CblasLeft : CblasRight;
      const auto uplo = lower ? CblasLower : CblasUpper;
      const auto trans = transpose ? CblasTrans : CblasNoTrans;
      const auto diag = unit ? CblasUnit : CblasNonUnit;
      const int r = static_cast<int>(rows), c = static_cast<int>(cols), mi = static_cast<int>(m);
      if constexpr (std::is_same_v<T, double>)
        cblas_dtrsm(CblasRowMajor, side, uplo, trans, diag, r, c, 1.0, a + k * a_size, mi, x, c);
      else
        cblas_strsm(CblasRowMajor, side, uplo, trans, diag, r, c, 1.0f, a + k * a_size, mi, x, c);
    }
    return;
  }
#endif
#pragma omp parallel for schedule(static) if (parallel_batches(batches, b_size * m))
  for (int64_t k = 0; k < batches; ++k) {
    ConstMatMap<T> ak(a + k * a_size, m, m);
    MatMap<T> x(out + k * b_size, rows, cols);
    x = ConstMatMap<T>(b + k * b_size, rows, cols);
    if (lower && unit)
      solve_one<Eigen::UnitLower>(ak, x, left, transpose);
    else if (lower)
      solve_one<Eigen::Lower>(ak, x, left, transpose);
    else if (unit)
      solve_one<Eigen::UnitUpper>(ak, x, left, transpose);
    else
      solve_one<Eigen::Upper>(ak, x, left, transpose);
  }
}

// The permutation that `pivots` (row i swapped with row pivots[i], in order)
// make of 0..m-1; a pivot out of [0, m) is skipped, as JAX's kernel does.
void pivots_to_permutation(const int32_t* pivots, int64_t k, int32_t* perm, int64_t m) {
  for (int64_t i = 0; i < m; ++i) perm[i] = static_cast<int32_t>(i);
  for (int64_t i = 0; i < k; ++i)
    if (pivots[i] >= 0 && pivots[i] < m) std::swap(perm[i], perm[pivots[i]]);
}

// Unblocked right-looking LU of a row-major m x n matrix in place (LAPACK's
// getf2 order of operations): rows are contiguous, so the swaps and the
// updates are vector loops.
template <class T>
void lu_unblocked(T* a, int64_t m, int64_t n, int32_t* pivots) {
  const int64_t k = std::min(m, n);
  for (int64_t j = 0; j < k; ++j) {
    int64_t p = j;
    T best = std::abs(a[j * n + j]);
    for (int64_t i = j + 1; i < m; ++i)
      if (std::abs(a[i * n + j]) > best) best = std::abs(a[i * n + j]), p = i;
    pivots[j] = static_cast<int32_t>(p);
    if (p != j) std::swap_ranges(a + j * n, a + (j + 1) * n, a + p * n);
    const T pivot = a[j * n + j];
    if (pivot == T(0)) continue;
    const T* row_j = a + j * n;
    for (int64_t i = j + 1; i < m; ++i) {
      T* row_i = a + i * n;
      const T l = row_i[j] / pivot;
      row_i[j] = l;
      for (int64_t c = j + 1; c < n; ++c) row_i[c] -= l * row_j[c];
    }
  }
}

template <class T>
void lu_typed(const KernelCall& call) {
  const ir::ValueType& t = *call.inputs[0].type;
  const int64_t m = t.shape[t.rank() - 2], n = t.shape[t.rank() - 1], k = std::min(m, n);
  const int64_t size = m * n, batches = size == 0 ? 0 : t.num_elements() / size;
  const T* in = static_cast<const T*>(call.inputs[0].data);
  T* out = static_cast<T*>(call.outputs[0].data);
  int32_t* pivots = static_cast<int32_t*>(call.outputs[1].data);
  int32_t* perm = static_cast<int32_t*>(call.outputs[2].data);
  if (batches == 0) {  // no entries, but maybe rows: the identity permutations of the batch
    int64_t rows = 1;
    for (int i = 0; i + 2 < t.rank(); ++i) rows *= t.shape[static_cast<size_t>(i)];
    for (int64_t b = 0; b < rows; ++b) pivots_to_permutation(nullptr, 0, perm + b * m, m);
    return;
  }
#ifdef GRAFT_HAVE_OPENBLAS
  if (std::max(m, n) >= kLapackMin && m <= 0x7fffffff && n <= 0x7fffffff) {
    ensure_blas_core();
    const int mi = static_cast<int>(m), ni = static_cast<int>(n);
    std::vector<T> col(static_cast<size_t>(size));
    std::vector<int> ipiv(static_cast<size_t>(k));
    for (int64_t b = 0; b < batches; ++b) {
      // getrf works on column-major storage: transpose in and out with
      // OpenBLAS's omatcopy (twice as fast as Eigen's assignment at 1024).
      int info = 0;
      if constexpr (std::is_same_v<T, double>) {
        cblas_domatcopy(CblasRowMajor, CblasTrans, mi, ni, 1.0, in + b * size, ni, col.data(), mi);
        dgetrf_(&mi, &ni, col.data(), &mi, ipiv.data(), &info);
        cblas_domatcopy(CblasRowMajor, CblasTrans, ni, mi, 1.0, col.data(), mi, out + b * size, ni);
      } else {
        cblas_somatcopy(CblasRowMajor, CblasTrans, mi, ni, 1.0f, in + b * size, ni, col.data(), mi);
        sgetrf_(&mi, &ni, col.data(), &mi, ipiv.data(), &info);
        cblas_somatcopy(CblasRowMajor, CblasTrans, ni, mi, 1.0f, col.data(), mi, out + b * size, ni);
      }
      // info > 0 (an exactly singular U) is a result, not an error.
      for (int64_t i = 0; i < k; ++i) pivots[b * k + i] = ipiv[static_cast<size_t>(i)] - 1;
      pivots_to_permutation(pivots + b * k, k, perm + b * m, m);
    }
    return;
  }
#endif
  std::copy(in, in + batches * size, out);
#pragma omp parallel for schedule(static) if (parallel_batches(batches, size * k))
  for (int64_t b = 0; b < batches; ++b) {
    lu_unblocked(out + b * size, m, n, pivots + b * k);
    pivots_to_permutation(pivots + b * k, k, perm + b * m, m);
  }
}

#ifdef GRAFT_HAVE_OPENBLAS
// LAPACK's syevd for one precision, its workspace sized by a query first.
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
    work.resize(static_cast<size_t>(work_size));
    iwork.resize(static_cast<size_t>(iwork_size));
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
#ifdef GRAFT_HAVE_OPENBLAS
  if (n >= kLapackMin && n <= 0x7fffffff) {
    ensure_blas_core();
    const int ni = static_cast<int>(n);
    std::vector<T> col(static_cast<size_t>(size)), work;
    std::vector<int> iwork;
    for (int64_t b = 0; b < batches; ++b) {
      // Row-major storage read as column-major is a^T: its upper triangle is a's lower one.
      std::copy(in + b * size, in + (b + 1) * size, col.begin());
      const int info = syevd<T>(lower ? "U" : "L", ni, col.data(), w_out + b * n, work, iwork);
      if (info != 0) {
        std::fill(v_out + b * size, v_out + (b + 1) * size, kNaN);
        std::fill(w_out + b * n, w_out + (b + 1) * n, kNaN);
        continue;
      }
      // Eigenvectors are column-major columns: row-major v is their transpose.
      if constexpr (std::is_same_v<T, double>)
        cblas_domatcopy(CblasRowMajor, CblasTrans, ni, ni, 1.0, col.data(), ni, v_out + b * size, ni);
      else
        cblas_somatcopy(CblasRowMajor, CblasTrans, ni, ni, 1.0f, col.data(), ni, v_out + b * size, ni);
    }
    return;
  }
#endif
#pragma omp parallel for schedule(static) if (parallel_batches(batches, size * n * 4))
  for (int64_t b = 0; b < batches; ++b) {
    const ConstMatMap<T> a(in + b * size, n, n);
    // Eigen's solver reads the lower triangle; a's upper one is a^T's lower.
    Eigen::SelfAdjointEigenSolver<RowMajor<T>> es;
    if (lower)
      es.compute(a, Eigen::ComputeEigenvectors);
    else
      es.compute(a.transpose(), Eigen::ComputeEigenvectors);
    MatMap<T> v(v_out + b * size, n, n);
    Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, 1>> w(w_out + b * n, n);
    if (es.info() != Eigen::Success) {
      v.setConstant(kNaN);
      w.setConstant(kNaN);
      continue;
    }
    v = es.eigenvectors();
    w = es.eigenvalues();
  }
}

template <template <class> class Typed>
void float_kernel(const KernelCall& call) {
  if (call.inputs[0].type->dtype == DType::f64)
    Typed<double>::run(call);
  else
    Typed<float>::run(call);
}

template <class T>
struct Cholesky {
  static void run(const KernelCall& call) { cholesky_typed<T>(call); }
};
template <class T>
struct TriangularSolve {
  static void run(const KernelCall& call) { triangular_solve_typed<T>(call); }
};

template <class T>
struct Eigh {
  static void run(const KernelCall& call) { eigh_typed<T>(call); }
};
template <class T>
struct Lu {
  static void run(const KernelCall& call) { lu_typed<T>(call); }
};

}  // namespace

void cholesky_kernel(const KernelCall& call) { float_kernel<Cholesky>(call); }

void triangular_solve_kernel(const KernelCall& call) { float_kernel<TriangularSolve>(call); }

void lu_kernel(const KernelCall& call) { float_kernel<Lu>(call); }

void eigh_kernel(const KernelCall& call) { float_kernel<Eigh>(call); }

void lu_pivots_to_permutation_kernel(const KernelCall& call) {
  const ir::ValueType& t = *call.inputs[0].type;
  const int64_t k = t.shape.back(), m = call.outputs[0].type->shape.back();
  const int64_t rows = k == 0 ? call.outputs[0].type->num_elements() / std::max<int64_t>(m, 1) : t.num_elements() / k;
  const auto* pivots = static_cast<const int32_t*>(call.inputs[0].data);
  auto* perm = static_cast<int32_t*>(call.outputs[0].data);
  for (int64_t b = 0; b < rows; ++b) pivots_to_permutation(pivots + b * k, k, perm + b * m, m);
}

}  // namespace graft::interpreter
