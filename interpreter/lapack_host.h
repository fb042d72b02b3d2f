// Column-major LAPACK and BLAS routines on host memory, with the arguments
// cuSOLVER's and cuBLAS's versions take: the emulated CUDA driver serves
// those libraries' calls with them (codegen/cuda/emulated_driver.cpp), so
// CI runs the code that forms the calls. OpenBLAS's LAPACK; a build without
// it throws UnsupportedError.
#pragma once

namespace graft::interpreter::lapack {

// Whether these routines exist in this build (OpenBLAS).
bool available();

// Cholesky factor of the upper (or lower) triangle of the n x n matrix a,
// in place: LAPACK's potrf. Returns its info (0, or the order of the first
// minor that is not positive definite).
template <class T>
int potrf(bool upper, int n, T* a, int lda);

// Eigenvalues w (ascending) and, with vectors, eigenvectors in a's columns,
// of the symmetric matrix a's upper (or lower) triangle: LAPACK's syevd.
template <class T>
int syevd(bool vectors, bool upper, int n, T* a, int lda, T* w);

// op(a) x = alpha b (left) or x op(a) = alpha b, x over b in place, a
// triangular (upper or lower, unit diagonal or not), op(a) = a or a^T:
// BLAS's trsm.
template <class T>
void trsm(bool left, bool upper, bool trans, bool unit, int m, int n, T alpha, const T* a, int lda, T* b, int ldb);

// LU with partial pivoting of the m x n matrix a, in place; ipiv (min(m,
// n)) receives the 1-based rows swapped: LAPACK's getrf.
template <class T>
int getrf(int m, int n, T* a, int lda, int* ipiv);

// Householder QR of a (m x n) in LAPACK's packed form, taus in tau: geqrf.
template <class T>
int geqrf(int m, int n, T* a, int lda, T* tau);

// The first n columns of the product of a's k reflectors: orgqr.
template <class T>
int orgqr(int m, int n, int k, T* a, int lda, const T* tau);

// Singular values s and, with job 'S' or 'A', vectors u and vt of a (m x n,
// destroyed): LAPACK's gesvd.
template <class T>
int gesvd(char job, int m, int n, T* a, int lda, T* s, T* u, int ldu, T* vt, int ldvt);

}  // namespace graft::interpreter::lapack
