// LAPACK and BLAS routines of OpenBLAS, one overload per element type
// (float, double, std::complex<float>, std::complex<double>: LAPACK's s, d,
// c and z), so that a linear-algebra kernel is written once for all four.
// Column-major, as LAPACK; each routine sizes its workspace with LAPACK's
// query on the first call and keeps it in `Workspace` for the next matrix of
// a batch. Only in builds with OpenBLAS (GRAFT_HAVE_OPENBLAS).
#pragma once

#include <cblas.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace graft::interpreter::lapack {

using c64 = std::complex<float>;
using c128 = std::complex<double>;

// The real type of T (float for c64).
template <class T>
struct real_of {
  using type = T;
};
template <class R>
struct real_of<std::complex<R>> {
  using type = R;
};
template <class T>
using Real = typename real_of<T>::type;

template <class T>
inline constexpr bool is_complex_v = !std::is_same_v<T, Real<T>>;

extern "C" {
// clang-format off
void spotrf_(const char*, const int*, float*, const int*, int*);
void dpotrf_(const char*, const int*, double*, const int*, int*);
void cpotrf_(const char*, const int*, c64*, const int*, int*);
void zpotrf_(const char*, const int*, c128*, const int*, int*);
void sgetrf_(const int*, const int*, float*, const int*, int*, int*);
void dgetrf_(const int*, const int*, double*, const int*, int*, int*);
void cgetrf_(const int*, const int*, c64*, const int*, int*, int*);
void zgetrf_(const int*, const int*, c128*, const int*, int*, int*);
void sgeqrf_(const int*, const int*, float*, const int*, float*, float*, const int*, int*);
void dgeqrf_(const int*, const int*, double*, const int*, double*, double*, const int*, int*);
void cgeqrf_(const int*, const int*, c64*, const int*, c64*, c64*, const int*, int*);
void zgeqrf_(const int*, const int*, c128*, const int*, c128*, c128*, const int*, int*);
void sorgqr_(const int*, const int*, const int*, float*, const int*, const float*, float*, const int*, int*);
void dorgqr_(const int*, const int*, const int*, double*, const int*, const double*, double*, const int*, int*);
void cungqr_(const int*, const int*, const int*, c64*, const int*, const c64*, c64*, const int*, int*);
void zungqr_(const int*, const int*, const int*, c128*, const int*, const c128*, c128*, const int*, int*);
void ssyevd_(const char*, const char*, const int*, float*, const int*, float*, float*, const int*, int*, const int*, int*);
void dsyevd_(const char*, const char*, const int*, double*, const int*, double*, double*, const int*, int*, const int*, int*);
void cheevd_(const char*, const char*, const int*, c64*, const int*, float*, c64*, const int*, float*, const int*, int*, const int*, int*);
void zheevd_(const char*, const char*, const int*, c128*, const int*, double*, c128*, const int*, double*, const int*, int*, const int*, int*);
void sgesdd_(const char*, const int*, const int*, float*, const int*, float*, float*, const int*, float*, const int*, float*, const int*, int*, int*);
void dgesdd_(const char*, const int*, const int*, double*, const int*, double*, double*, const int*, double*, const int*, double*, const int*, int*, int*);
void cgesdd_(const char*, const int*, const int*, c64*, const int*, float*, c64*, const int*, c64*, const int*, c64*, const int*, float*, int*, int*);
void zgesdd_(const char*, const int*, const int*, c128*, const int*, double*, c128*, const int*, c128*, const int*, c128*, const int*, double*, int*, int*);
void sgeev_(const char*, const char*, const int*, float*, const int*, float*, float*, float*, const int*, float*, const int*, float*, const int*, int*);
void dgeev_(const char*, const char*, const int*, double*, const int*, double*, double*, double*, const int*, double*, const int*, double*, const int*, int*);
void cgeev_(const char*, const char*, const int*, c64*, const int*, c64*, c64*, const int*, c64*, const int*, c64*, const int*, float*, int*);
void zgeev_(const char*, const char*, const int*, c128*, const int*, c128*, c128*, const int*, c128*, const int*, c128*, const int*, double*, int*);
// clang-format on
}

// Scratch space of the routines below for one thread, grown on demand.
template <class T>
struct Workspace {
  std::vector<T> work;
  std::vector<Real<T>> rwork;
  std::vector<int> iwork;
};

// b (cols x rows, leading dimension ldb) = a^T for a rows x cols row-major
// matrix a: the row-major <-> column-major copy around every LAPACK call.
inline void transpose_copy(int rows, int cols, const float* a, int lda, float* b, int ldb) {
  cblas_somatcopy(CblasRowMajor, CblasTrans, rows, cols, 1.0f, a, lda, b, ldb);
}
inline void transpose_copy(int rows, int cols, const double* a, int lda, double* b, int ldb) {
  cblas_domatcopy(CblasRowMajor, CblasTrans, rows, cols, 1.0, a, lda, b, ldb);
}
inline void transpose_copy(int rows, int cols, const c64* a, int lda, c64* b, int ldb) {
  const float one[2] = {1.0f, 0.0f};
  cblas_comatcopy(CblasRowMajor, CblasTrans, rows, cols, one, reinterpret_cast<const float*>(a), lda,
                  reinterpret_cast<float*>(b), ldb);
}
inline void transpose_copy(int rows, int cols, const c128* a, int lda, c128* b, int ldb) {
  const double one[2] = {1.0, 0.0};
  cblas_zomatcopy(CblasRowMajor, CblasTrans, rows, cols, one, reinterpret_cast<const double*>(a), lda,
                  reinterpret_cast<double*>(b), ldb);
}

// Cholesky factorization of a's `uplo` triangle in place (potrf); LAPACK's info.
inline int potrf(char uplo, int n, float* a, int lda) {
  int info = 0;
  spotrf_(&uplo, &n, a, &lda, &info);
  return info;
}
inline int potrf(char uplo, int n, double* a, int lda) {
  int info = 0;
  dpotrf_(&uplo, &n, a, &lda, &info);
  return info;
}
inline int potrf(char uplo, int n, c64* a, int lda) {
  int info = 0;
  cpotrf_(&uplo, &n, a, &lda, &info);
  return info;
}
inline int potrf(char uplo, int n, c128* a, int lda) {
  int info = 0;
  zpotrf_(&uplo, &n, a, &lda, &info);
  return info;
}

// LU with partial pivoting in place, 1-based pivots (getrf); LAPACK's info.
inline int getrf(int m, int n, float* a, int lda, int* ipiv) {
  int info = 0;
  sgetrf_(&m, &n, a, &lda, ipiv, &info);
  return info;
}
inline int getrf(int m, int n, double* a, int lda, int* ipiv) {
  int info = 0;
  dgetrf_(&m, &n, a, &lda, ipiv, &info);
  return info;
}
inline int getrf(int m, int n, c64* a, int lda, int* ipiv) {
  int info = 0;
  cgetrf_(&m, &n, a, &lda, ipiv, &info);
  return info;
}
inline int getrf(int m, int n, c128* a, int lda, int* ipiv) {
  int info = 0;
  zgetrf_(&m, &n, a, &lda, ipiv, &info);
  return info;
}

namespace detail {
inline void geqrf_(int m, int n, float* a, int lda, float* tau, float* w, int lw, int* info) {
  sgeqrf_(&m, &n, a, &lda, tau, w, &lw, info);
}
inline void geqrf_(int m, int n, double* a, int lda, double* tau, double* w, int lw, int* info) {
  dgeqrf_(&m, &n, a, &lda, tau, w, &lw, info);
}
inline void geqrf_(int m, int n, c64* a, int lda, c64* tau, c64* w, int lw, int* info) {
  cgeqrf_(&m, &n, a, &lda, tau, w, &lw, info);
}
inline void geqrf_(int m, int n, c128* a, int lda, c128* tau, c128* w, int lw, int* info) {
  zgeqrf_(&m, &n, a, &lda, tau, w, &lw, info);
}
inline void ungqr_(int m, int n, int k, float* a, int lda, const float* tau, float* w, int lw, int* info) {
  sorgqr_(&m, &n, &k, a, &lda, tau, w, &lw, info);
}
inline void ungqr_(int m, int n, int k, double* a, int lda, const double* tau, double* w, int lw, int* info) {
  dorgqr_(&m, &n, &k, a, &lda, tau, w, &lw, info);
}
inline void ungqr_(int m, int n, int k, c64* a, int lda, const c64* tau, c64* w, int lw, int* info) {
  cungqr_(&m, &n, &k, a, &lda, tau, w, &lw, info);
}
inline void ungqr_(int m, int n, int k, c128* a, int lda, const c128* tau, c128* w, int lw, int* info) {
  zungqr_(&m, &n, &k, a, &lda, tau, w, &lw, info);
}

// Grows work to at least LAPACK's queried size (a real number in a T).
template <class T>
void grow(std::vector<T>& work, T queried) {
  const size_t size = static_cast<size_t>(std::real(queried)) + 1;
  if (work.size() < size) work.resize(size);
}
}  // namespace detail

// Householder QR in LAPACK's packed form, taus in tau (geqrf).
template <class T>
int geqrf(int m, int n, T* a, int lda, T* tau, Workspace<T>& ws) {
  int info = 0;
  T query = 0;
  detail::geqrf_(m, n, a, lda, tau, &query, -1, &info);
  detail::grow(ws.work, query);
  detail::geqrf_(m, n, a, lda, tau, ws.work.data(), static_cast<int>(ws.work.size()), &info);
  return info;
}

// The first n columns of the product of a's k reflectors (orgqr, ungqr).
template <class T>
int ungqr(int m, int n, int k, T* a, int lda, const T* tau, Workspace<T>& ws) {
  int info = 0;
  T query = 0;
  detail::ungqr_(m, n, k, a, lda, tau, &query, -1, &info);
  detail::grow(ws.work, query);
  detail::ungqr_(m, n, k, a, lda, tau, ws.work.data(), static_cast<int>(ws.work.size()), &info);
  return info;
}

// Eigenvalues w (ascending) and, with jobz 'V', eigenvectors in a's columns
// of the symmetric (Hermitian) matrix in a's `uplo` triangle (syevd, heevd).
template <class T>
int heevd(char jobz, char uplo, int n, T* a, int lda, Real<T>* w, Workspace<T>& ws) {
  int info = 0, lwork = -1, lrwork = -1, liwork = -1, iquery = 0;
  T query = 0;
  Real<T> rquery = 0;
  auto call = [&](T* work, Real<T>* rwork, int* iwork) {
    if constexpr (std::is_same_v<T, float>)
      ssyevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, &info);
    else if constexpr (std::is_same_v<T, double>)
      dsyevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, &info);
    else if constexpr (std::is_same_v<T, c64>)
      cheevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, rwork, &lrwork, iwork, &liwork, &info);
    else
      zheevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, rwork, &lrwork, iwork, &liwork, &info);
  };
  call(&query, &rquery, &iquery);
  detail::grow(ws.work, query);
  detail::grow(ws.rwork, rquery);
  if (ws.iwork.size() < static_cast<size_t>(std::max(iquery, 1)))
    ws.iwork.resize(static_cast<size_t>(std::max(iquery, 1)));
  lwork = static_cast<int>(ws.work.size());
  lrwork = static_cast<int>(ws.rwork.size());
  liwork = static_cast<int>(ws.iwork.size());
  call(ws.work.data(), ws.rwork.data(), ws.iwork.data());
  return info;
}

// Singular values s (descending) and, with jobz 'S' or 'A', the vectors u
// and vt of a (destroyed), by divide and conquer (gesdd).
template <class T>
int gesdd(char jobz, int m, int n, T* a, int lda, Real<T>* s, T* u, int ldu, T* vt, int ldvt, Workspace<T>& ws) {
  const int64_t mn = std::min(m, n), mx = std::max(m, n);
  if (ws.iwork.size() < static_cast<size_t>(8 * mn)) ws.iwork.resize(static_cast<size_t>(8 * mn));
  if constexpr (is_complex_v<T>) {  // rwork as LAPACK 3.7's zgesdd documents it
    const int64_t r = jobz == 'N' ? 7 * mn : std::max(5 * mn * mn + 5 * mn, 2 * mx * mn + 2 * mn * mn + mn);
    if (ws.rwork.size() < static_cast<size_t>(std::max<int64_t>(r, 1)))
      ws.rwork.resize(static_cast<size_t>(std::max<int64_t>(r, 1)));
  }
  int info = 0, lwork = -1;
  T query = 0;
  auto call = [&](T* work) {
    if constexpr (std::is_same_v<T, float>)
      sgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, ws.iwork.data(), &info);
    else if constexpr (std::is_same_v<T, double>)
      dgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, ws.iwork.data(), &info);
    else if constexpr (std::is_same_v<T, c64>)
      cgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, ws.rwork.data(), ws.iwork.data(), &info);
    else
      zgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, ws.rwork.data(), ws.iwork.data(), &info);
  };
  call(&query);
  detail::grow(ws.work, query);
  lwork = static_cast<int>(ws.work.size());
  call(ws.work.data());
  return info;
}

// Eigenvalues and right (jobvr 'V') and left (jobvl 'V') eigenvectors of a
// general matrix a (destroyed), each vector of unit 2-norm with its largest
// component real (geev). Real matrices give (wr, wi) and vectors packed as
// LAPACK's: a complex pair j, j+1 in columns j (real part) and j+1
// (imaginary part); complex ones give w and the vectors themselves.
template <class T>
int geev(char jobvl, char jobvr, int n, T* a, int lda, T* w, T* wi, T* vl, int ldvl, T* vr, int ldvr,
         Workspace<T>& ws) {
  if constexpr (is_complex_v<T>)
    if (ws.rwork.size() < static_cast<size_t>(2 * std::max(n, 1)))
      ws.rwork.resize(static_cast<size_t>(2 * std::max(n, 1)));
  int info = 0, lwork = -1;
  T query = 0;
  auto call = [&](T* work) {
    if constexpr (std::is_same_v<T, float>)
      sgeev_(&jobvl, &jobvr, &n, a, &lda, w, wi, vl, &ldvl, vr, &ldvr, work, &lwork, &info);
    else if constexpr (std::is_same_v<T, double>)
      dgeev_(&jobvl, &jobvr, &n, a, &lda, w, wi, vl, &ldvl, vr, &ldvr, work, &lwork, &info);
    else if constexpr (std::is_same_v<T, c64>)
      cgeev_(&jobvl, &jobvr, &n, a, &lda, w, vl, &ldvl, vr, &ldvr, work, &lwork, ws.rwork.data(), &info);
    else
      zgeev_(&jobvl, &jobvr, &n, a, &lda, w, vl, &ldvl, vr, &ldvr, work, &lwork, ws.rwork.data(), &info);
  };
  call(&query);
  detail::grow(ws.work, query);
  lwork = static_cast<int>(ws.work.size());
  call(ws.work.data());
  return info;
}

namespace detail {
struct TrsmArgs {
  CBLAS_SIDE side;
  CBLAS_UPLO uplo;
  CBLAS_TRANSPOSE trans;
  CBLAS_DIAG diag;
};
inline TrsmArgs trsm_args(bool left, bool upper, char trans, bool unit) {
  return {left ? CblasLeft : CblasRight, upper ? CblasUpper : CblasLower,
          trans == 'N'   ? CblasNoTrans
          : trans == 'T' ? CblasTrans
                         : CblasConjTrans,
          unit ? CblasUnit : CblasNonUnit};
}
}  // namespace detail

// op(a) x = b (left) or x op(a) = b over row-major b (rows x cols) in
// place, op(a) = a, a^T or a^H (trans 'N', 'T', 'C'), a's `upper` or lower
// triangle (BLAS's trsm), one overload per type.
inline void trsm(bool left, bool upper, char trans, bool unit, int rows, int cols, const float* a, int lda, float* b,
                 int ldb) {
  const auto t = detail::trsm_args(left, upper, trans, unit);
  cblas_strsm(CblasRowMajor, t.side, t.uplo, t.trans, t.diag, rows, cols, 1.0f, a, lda, b, ldb);
}
inline void trsm(bool left, bool upper, char trans, bool unit, int rows, int cols, const double* a, int lda, double* b,
                 int ldb) {
  const auto t = detail::trsm_args(left, upper, trans, unit);
  cblas_dtrsm(CblasRowMajor, t.side, t.uplo, t.trans, t.diag, rows, cols, 1.0, a, lda, b, ldb);
}
inline void trsm(bool left, bool upper, char trans, bool unit, int rows, int cols, const c64* a, int lda, c64* b,
                 int ldb) {
  const auto t = detail::trsm_args(left, upper, trans, unit);
  const float one[2] = {1.0f, 0.0f};
  cblas_ctrsm(CblasRowMajor, t.side, t.uplo, t.trans, t.diag, rows, cols, one, reinterpret_cast<const float*>(a), lda,
              reinterpret_cast<float*>(b), ldb);
}
inline void trsm(bool left, bool upper, char trans, bool unit, int rows, int cols, const c128* a, int lda, c128* b,
                 int ldb) {
  const auto t = detail::trsm_args(left, upper, trans, unit);
  const double one[2] = {1.0, 0.0};
  cblas_ztrsm(CblasRowMajor, t.side, t.uplo, t.trans, t.diag, rows, cols, one, reinterpret_cast<const double*>(a), lda,
              reinterpret_cast<double*>(b), ldb);
}

}  // namespace graft::interpreter::lapack
