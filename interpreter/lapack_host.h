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

}  // namespace graft::interpreter::lapack
