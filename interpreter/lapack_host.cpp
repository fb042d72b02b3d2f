#include "interpreter/lapack_host.h"

#include <algorithm>
#include <type_traits>
#include <vector>

#include "graft/errors.h"

#ifdef GRAFT_HAVE_OPENBLAS
#include <cblas.h>

#include "interpreter/blas_core.h"

#include "interpreter/lapack_calls.h"

extern "C" {
void dgesvd_(const char* jobu, const char* jobvt, const int* m, const int* n, double* a, const int* lda, double* s,
             double* u, const int* ldu, double* vt, const int* ldvt, double* work, const int* lwork, int* info);
void sgesvd_(const char* jobu, const char* jobvt, const int* m, const int* n, float* a, const int* lda, float* s,
             float* u, const int* ldu, float* vt, const int* ldvt, float* work, const int* lwork, int* info);
}
#endif

namespace graft::interpreter::lapack {

#ifdef GRAFT_HAVE_OPENBLAS

bool available() { return true; }

template <class T>
int potrf(bool upper, int n, T* a, int lda) {
  ensure_blas_core();
  return lapack::potrf(upper ? 'U' : 'L', n, a, lda);
}

template <class T>
int syevd(bool vectors, bool upper, int n, T* a, int lda, T* w) {
  ensure_blas_core();
  Workspace<T> ws;
  return heevd(vectors ? 'V' : 'N', upper ? 'U' : 'L', n, a, lda, w, ws);
}

template <class T>
void trsm(bool left, bool upper, bool trans, bool unit, int m, int n, T alpha, const T* a, int lda, T* b, int ldb) {
  ensure_blas_core();
  const CBLAS_SIDE side = left ? CblasLeft : CblasRight;
  const CBLAS_UPLO uplo = upper ? CblasUpper : CblasLower;
  const CBLAS_TRANSPOSE op = trans ? CblasTrans : CblasNoTrans;
  const CBLAS_DIAG diag = unit ? CblasUnit : CblasNonUnit;
  if constexpr (std::is_same_v<T, double>)
    cblas_dtrsm(CblasColMajor, side, uplo, op, diag, m, n, alpha, a, lda, b, ldb);
  else
    cblas_strsm(CblasColMajor, side, uplo, op, diag, m, n, alpha, a, lda, b, ldb);
}

template <class T>
int getrf(int m, int n, T* a, int lda, int* ipiv) {
  ensure_blas_core();
  return lapack::getrf(m, n, a, lda, ipiv);
}

template <class T>
int geqrf(int m, int n, T* a, int lda, T* tau) {
  ensure_blas_core();
  Workspace<T> ws;
  return lapack::geqrf(m, n, a, lda, tau, ws);
}

template <class T>
int orgqr(int m, int n, int k, T* a, int lda, const T* tau) {
  ensure_blas_core();
  Workspace<T> ws;
  return ungqr(m, n, k, a, lda, tau, ws);
}

template <class T>
int gesvd(char job, int m, int n, T* a, int lda, T* s, T* u, int ldu, T* vt, int ldvt) {
  ensure_blas_core();
  int info = 0, query = -1;
  T size = 0;
  T none = 0;
  if (job == 'N') u = vt = &none;
  ldu = std::max(ldu, 1);
  ldvt = std::max(ldvt, 1);
  if constexpr (std::is_same_v<T, double>)
    dgesvd_(&job, &job, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, &size, &query, &info);
  else
    sgesvd_(&job, &job, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, &size, &query, &info);
  std::vector<T> work(static_cast<size_t>(size) + 1);
  const int lwork = static_cast<int>(work.size());
  if constexpr (std::is_same_v<T, double>)
    dgesvd_(&job, &job, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work.data(), &lwork, &info);
  else
    sgesvd_(&job, &job, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work.data(), &lwork, &info);
  return info;
}

#else

bool available() { return false; }

namespace {
[[noreturn]] void missing() {
  throw UnsupportedError("the emulated cuSOLVER serves its calls with OpenBLAS's LAPACK, which this build lacks");
}
}  // namespace

template <class T>
int potrf(bool, int, T*, int) {
  missing();
}
template <class T>
int syevd(bool, bool, int, T*, int, T*) {
  missing();
}
template <class T>
void trsm(bool, bool, bool, bool, int, int, T, const T*, int, T*, int) {
  missing();
}

template <class T>
int getrf(int, int, T*, int, int*) {
  missing();
}
template <class T>
int geqrf(int, int, T*, int, T*) {
  missing();
}
template <class T>
int orgqr(int, int, int, T*, int, const T*) {
  missing();
}
template <class T>
int gesvd(char, int, int, T*, int, T*, T*, int, T*, int) {
  missing();
}

#endif

template int potrf<float>(bool, int, float*, int);
template int potrf<double>(bool, int, double*, int);
template int syevd<float>(bool, bool, int, float*, int, float*);
template int syevd<double>(bool, bool, int, double*, int, double*);
template void trsm<float>(bool, bool, bool, bool, int, int, float, const float*, int, float*, int);
template void trsm<double>(bool, bool, bool, bool, int, int, double, const double*, int, double*, int);

template int getrf<float>(int, int, float*, int, int*);
template int getrf<double>(int, int, double*, int, int*);
template int geqrf<float>(int, int, float*, int, float*);
template int geqrf<double>(int, int, double*, int, double*);
template int orgqr<float>(int, int, int, float*, int, const float*);
template int orgqr<double>(int, int, int, double*, int, const double*);
template int gesvd<float>(char, int, int, float*, int, float*, float*, int, float*, int);
template int gesvd<double>(char, int, int, double*, int, double*, double*, int, double*, int);

}  // namespace graft::interpreter::lapack
