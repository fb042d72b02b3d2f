// CPU kernels of cholesky, triangular_solve, lu and qr, per matrix of a batch
// (leading axes): matrices from kLapackMin rows go to OpenBLAS's LAPACK
// (potrf, trsm; blocked and threaded, one matrix after another), smaller ones
// to Eigen on row-major maps with the batches in parallel (no call overhead,
// and bench/linalg measures Eigen ahead of LAPACK there).
//
// cholesky reads the lower triangle of each matrix and writes L (zeros above
// the diagonal); a matrix that is not positive definite gives NaNs in the
// lower triangle and zeros above, as jax.lax.linalg.cholesky (so a caller can test for it without an
// exception in the middle of a jitted program). triangular_solve reads a's
// `lower` (or upper) triangle, its diagonal taken as ones with unit_diagonal,
// and solves op(a) x = b (left_side) or x op(a) = b, op(a) = a or a^T.
// lu factors each m x n matrix with partial pivoting as LAPACK's getrf (row
// j swapped with the row of the first largest |entry| in column j at or
// below it; a zero column is left as it is, so a singular matrix gives a U
// with a zero on its diagonal, not an error). qr is Householder QR by
// LAPACK's geqrf and orgqr at every size (as JAX's and NumPy's, so the same
// signs and roundings), small matrices of a batch in parallel; Eigen's
// HouseholderQR (the same reflectors and signs) only in a build without
// OpenBLAS. geqrf and householder_product are those two LAPACK steps alone,
// as jax.lax.linalg's. Every kernel is written once for f32, f64, c64 and
// c128 (LAPACK's s, d, c and z routines, interpreter/lapack_calls.h): for a
// complex matrix cholesky factors a = L L^H, and triangular_solve's op(a) is
// also conj(a) or a^H (conjugate_a). (The spectral kernels are in
// interpreter/kernels/linalg_spectral.cpp.)
#include <Eigen/Cholesky>
#include <Eigen/Core>
#ifndef GRAFT_HAVE_OPENBLAS
#include <Eigen/QR>
#endif
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "graft/errors.h"
#include "interpreter/blas_core.h"
#include "interpreter/kernel.h"
#include "interpreter/kernels/loops.h"

#ifdef GRAFT_HAVE_OPENBLAS
#include "interpreter/lapack_calls.h"
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

// A NaN of T (NaN + NaN i for a complex T).
template <class T>
T nan_of() {
  using R = decltype(std::real(T{}));
  const R nan = std::numeric_limits<R>::quiet_NaN();
  if constexpr (std::is_same_v<T, R>)
    return nan;
  else
    return T(nan, nan);
}

// A factor that failed, as lax.linalg.cholesky's: NaN on and below the
// diagonal, 0 above (set here: a failed factorization may leave anything).
template <typename T>
void fail_factor(MatMap<T>& l) {
  l.template triangularView<Eigen::Lower>().setConstant(nan_of<T>());
  l.template triangularView<Eigen::StrictlyUpper>().setZero();
}

// |re| + |im| (|x| for a real x): the magnitude by which LAPACK's getrf picks
// pivots (BLAS's i?amax), so small matrices pivot as large ones.
template <class T>
auto abs1(const T& x) {
  if constexpr (std::is_arithmetic_v<T>)
    return std::abs(x);
  else
    return std::abs(x.real()) + std::abs(x.imag());
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
      // For a complex a that factors conj(a) = U^H U with U = L^T again.
      if (lapack::potrf('U', ni, l.data(), ni) != 0) fail_factor(l);
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
      fail_factor(l);
      continue;
    }
    l.template triangularView<Eigen::StrictlyUpper>().setZero();
  }
}

// x = op(a)^-1 b or b op(a)^-1 in place in x (holding b), a's triangle
// `Mode`; op(a) = a, a^T or (adjoint) a^H.
template <int Mode, class T>
void solve_one(const ConstMatMap<T>& a, MatMap<T>& x, bool left, bool transpose, bool adjoint) {
  const auto tri = a.template triangularView<Mode>();
  if (left) {
    if (adjoint)
      tri.adjoint().solveInPlace(x);
    else if (transpose)
      tri.transpose().solveInPlace(x);
    else
      tri.solveInPlace(x);
  } else {
    if (adjoint)
      tri.adjoint().template solveInPlace<Eigen::OnTheRight>(x);
    else if (transpose)
      tri.transpose().template solveInPlace<Eigen::OnTheRight>(x);
    else
      tri.template solveInPlace<Eigen::OnTheRight>(x);
  }
}

// x = conj(x) for a complex T, in place; nothing for a real one.
template <class T>
void conjugate_in_place(T* x, int64_t n) {
  if constexpr (!std::is_arithmetic_v<T>)
    for (int64_t i = 0; i < n; ++i) x[i] = std::conj(x[i]);
}

template <class T>
void triangular_solve_typed(const KernelCall& call) {
  const ir::ValueType& at = *call.inputs[0].type;
  const ir::ValueType& bt = *call.inputs[1].type;
  const bool left = int_attr(call, "left_side") != 0, lower = int_attr(call, "lower") != 0;
  const bool transpose = int_attr(call, "transpose_a") != 0, unit = int_attr(call, "unit_diagonal") != 0;
  // conj(a) x = b is a conj(x) = conj(b): conjugating b and x around the
  // plain solve gives op(a) = conj(a); with the transpose it is a^H.
  const bool conjugate = !std::is_arithmetic_v<T> && int_attr(call, "conjugate_a") != 0;
  const bool adjoint = conjugate && transpose, around = conjugate && !transpose;
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
      if (around) conjugate_in_place(x, b_size);
      const int r = static_cast<int>(rows), c = static_cast<int>(cols), mi = static_cast<int>(m);
      lapack::trsm(left, !lower, adjoint ? 'C' : transpose ? 'T' : 'N', unit, r, c, a + k * a_size, mi, x, c);
      if (around) conjugate_in_place(x, b_size);
    }
    return;
  }
#endif
#pragma omp parallel for schedule(static) if (parallel_batches(batches, b_size * m))
  for (int64_t k = 0; k < batches; ++k) {
    ConstMatMap<T> ak(a + k * a_size, m, m);
    MatMap<T> x(out + k * b_size, rows, cols);
    x = ConstMatMap<T>(b + k * b_size, rows, cols);
    if (around) conjugate_in_place(x.data(), b_size);
    if (lower && unit)
      solve_one<Eigen::UnitLower>(ak, x, left, transpose, adjoint);
    else if (lower)
      solve_one<Eigen::Lower>(ak, x, left, transpose, adjoint);
    else if (unit)
      solve_one<Eigen::UnitUpper>(ak, x, left, transpose, adjoint);
    else
      solve_one<Eigen::Upper>(ak, x, left, transpose, adjoint);
    if (around) conjugate_in_place(x.data(), b_size);
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
    auto best = abs1(a[j * n + j]);
    for (int64_t i = j + 1; i < m; ++i)
      if (abs1(a[i * n + j]) > best) best = abs1(a[i * n + j]), p = i;
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
      lapack::transpose_copy(mi, ni, in + b * size, ni, col.data(), mi);
      lapack::getrf(mi, ni, col.data(), mi, ipiv.data());  // info > 0 (an exactly singular U) is a result, not an error
      lapack::transpose_copy(ni, mi, col.data(), mi, out + b * size, ni);
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

template <class T>
void qr_typed(const KernelCall& call) {
  const ir::ValueType& t = *call.inputs[0].type;
  const int64_t m = t.shape[t.rank() - 2], n = t.shape[t.rank() - 1], k = std::min(m, n);
  const int64_t q_cols = call.outputs[0].type->shape.back(), r_rows = call.outputs[1].type->shape[t.rank() - 2];
  int64_t batches = 1;
  for (int i = 0; i + 2 < t.rank(); ++i) batches *= t.shape[static_cast<size_t>(i)];
  const T* in = static_cast<const T*>(call.inputs[0].data);
  T* q_out = static_cast<T*>(call.outputs[0].data);
  T* r_out = static_cast<T*>(call.outputs[1].data);
  const int64_t size = m * n, q_size = m * q_cols, r_size = r_rows * n;
  if (k == 0) {  // no reflectors: q is (a block of) the identity, r is empty or zero
    for (int64_t b = 0; b < batches; ++b) {
      MatMap<T>(q_out + b * q_size, m, q_cols).setIdentity();
      MatMap<T>(r_out + b * r_size, r_rows, n).setZero();
    }
    return;
  }
#ifdef GRAFT_HAVE_OPENBLAS
  if (m > 0x7fffffff || n > 0x7fffffff)
    throw Error("qr: matrices over 2^31 - 1 rows or columns are beyond LAPACK's ints");
  ensure_blas_core();
  const int mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k);
  const int qi = static_cast<int>(q_cols);
  // Small matrices of a batch in parallel (LAPACK then runs single-threaded
  // in each), large ones one after another with LAPACK's own threads.
  // Matrices [begin, end) of the batch, with this thread's workspace.
  auto run = [&](int64_t begin, int64_t end) {
    // Column-major m x max(n, q_cols): geqrf's reflectors, then ungqr's q in place.
    std::vector<T> col(static_cast<size_t>(m * std::max(n, q_cols))), tau(static_cast<size_t>(k));
    lapack::Workspace<T> ws;
    for (int64_t b = begin; b < end; ++b) {
      T* q = q_out + b * q_size;
      T* r = r_out + b * r_size;
      lapack::transpose_copy(mi, ni, in + b * size, ni, col.data(), mi);
      lapack::geqrf(mi, ni, col.data(), mi, tau.data(), ws);
      for (int64_t i = 0; i < r_rows; ++i)
        for (int64_t j = 0; j < n; ++j) r[i * n + j] = i <= j ? col[static_cast<size_t>(j * m + i)] : T(0);
      lapack::ungqr(mi, qi, ki, col.data(), mi, tau.data(), ws);
      lapack::transpose_copy(qi, mi, col.data(), mi, q, qi);
    }
  };
  over_batches(batches, std::max(m, n) < kThreadedLapackMin, run);
#else
#pragma omp parallel for schedule(static) if (parallel_batches(batches, size * k * 2))
  for (int64_t b = 0; b < batches; ++b) {
    const Eigen::HouseholderQR<RowMajor<T>> qr(ConstMatMap<T>(in + b * size, m, n));
    MatMap<T>(r_out + b * r_size, r_rows, n) = qr.matrixQR().topRows(r_rows).template triangularView<Eigen::Upper>();
    MatMap<T>(q_out + b * q_size, m, q_cols) = qr.householderQ() * RowMajor<T>::Identity(m, q_cols);
  }
#endif
}

// The number of matrices of a batch of [..., rows, cols] arrays.
int64_t matrices_of(const ir::ValueType& t) {
  int64_t batches = 1;
  for (int i = 0; i + 2 < t.rank(); ++i) batches *= t.shape[static_cast<size_t>(i)];
  return batches;
}

// geqrf: each m x n matrix to LAPACK's packed Householder QR and its taus.
template <class T>
void geqrf_typed(const KernelCall& call) {
  const ir::ValueType& t = *call.inputs[0].type;
  const int64_t m = t.shape[t.rank() - 2], n = t.shape[t.rank() - 1], k = std::min(m, n), size = m * n;
  const int64_t batches = matrices_of(t);
  const T* in = static_cast<const T*>(call.inputs[0].data);
  T* out = static_cast<T*>(call.outputs[0].data);
  T* taus = static_cast<T*>(call.outputs[1].data);
  if (size == 0) return;
#ifdef GRAFT_HAVE_OPENBLAS
  if (m > 0x7fffffff || n > 0x7fffffff)
    throw Error("geqrf: matrices over 2^31 - 1 rows or columns are beyond LAPACK's ints");
  ensure_blas_core();
  const int mi = static_cast<int>(m), ni = static_cast<int>(n);
  auto run = [&](int64_t begin, int64_t end) {
    std::vector<T> col(static_cast<size_t>(size));
    lapack::Workspace<T> ws;
    for (int64_t b = begin; b < end; ++b) {
      lapack::transpose_copy(mi, ni, in + b * size, ni, col.data(), mi);
      lapack::geqrf(mi, ni, col.data(), mi, taus + b * k, ws);
      lapack::transpose_copy(ni, mi, col.data(), mi, out + b * size, ni);
    }
  };
  over_batches(batches, std::max(m, n) < kThreadedLapackMin, run);
#else
#pragma omp parallel for schedule(static) if (parallel_batches(batches, size * k))
  for (int64_t b = 0; b < batches; ++b) {
    const Eigen::HouseholderQR<RowMajor<T>> qr(ConstMatMap<T>(in + b * size, m, n));
    MatMap<T>(out + b * size, m, n) = qr.matrixQR();
    for (int64_t i = 0; i < k; ++i) taus[b * k + i] = qr.hCoeffs()(i);
  }
#endif
}

// householder_product: the first n columns of H_0 H_1 .. H_{k-1}, each
// H_i = I - tau_i v_i v_i^T with v_i below a's diagonal in column i (and a
// 1 on it), as LAPACK's orgqr.
template <class T>
void householder_product_typed(const KernelCall& call) {
  const ir::ValueType& t = *call.inputs[0].type;
  const int64_t m = t.shape[t.rank() - 2], n = t.shape[t.rank() - 1], size = m * n;
  const int64_t k = call.inputs[1].type->shape.back();
  const int64_t batches = matrices_of(t);
  const T* in = static_cast<const T*>(call.inputs[0].data);
  const T* taus = static_cast<const T*>(call.inputs[1].data);
  T* out = static_cast<T*>(call.outputs[0].data);
  if (size == 0) return;
#ifdef GRAFT_HAVE_OPENBLAS
  if (m > 0x7fffffff) throw Error("householder_product: matrices over 2^31 - 1 rows are beyond LAPACK's ints");
  ensure_blas_core();
  const int mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k);
  auto run = [&](int64_t begin, int64_t end) {
    std::vector<T> col(static_cast<size_t>(size));
    lapack::Workspace<T> ws;
    for (int64_t b = begin; b < end; ++b) {
      lapack::transpose_copy(mi, ni, in + b * size, ni, col.data(), mi);
      lapack::ungqr(mi, ni, ki, col.data(), mi, taus + b * k, ws);
      lapack::transpose_copy(ni, mi, col.data(), mi, out + b * size, ni);
    }
  };
  over_batches(batches, m < kThreadedLapackMin, run);
#else
#pragma omp parallel for schedule(static) if (parallel_batches(batches, size * k * 2))
  for (int64_t b = 0; b < batches; ++b) {
    const RowMajor<T> v = ConstMatMap<T>(in + b * size, m, n);
    const Eigen::Matrix<T, Eigen::Dynamic, 1> h =
        Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, 1>>(taus + b * k, k);
    auto seq = Eigen::householderSequence(v.leftCols(k), h).setLength(k);
    MatMap<T>(out + b * size, m, n) = seq * RowMajor<T>::Identity(m, n);
  }
#endif
}

// Typed<T>::run for the operand's dtype: f32, f64, c64 or c128 (the shape
// rules admit no other).
template <template <class> class Typed>
void float_kernel(const KernelCall& call) {
  switch (call.inputs[0].type->dtype) {
    case DType::f32: return Typed<float>::run(call);
    case DType::f64: return Typed<double>::run(call);
    case DType::c64: return Typed<std::complex<float>>::run(call);
    case DType::c128: return Typed<std::complex<double>>::run(call);
    default:
      throw UnsupportedError(std::string(ir::op_name(call.op)) + ": no kernel for " +
                             dtype_name(call.inputs[0].type->dtype));
  }
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
struct Qr {
  static void run(const KernelCall& call) { qr_typed<T>(call); }
};
template <class T>
struct Geqrf {
  static void run(const KernelCall& call) { geqrf_typed<T>(call); }
};
template <class T>
struct HouseholderProduct {
  static void run(const KernelCall& call) { householder_product_typed<T>(call); }
};
template <class T>
struct Lu {
  static void run(const KernelCall& call) { lu_typed<T>(call); }
};

}  // namespace

void cholesky_kernel(const KernelCall& call) { float_kernel<Cholesky>(call); }

void triangular_solve_kernel(const KernelCall& call) { float_kernel<TriangularSolve>(call); }

void lu_kernel(const KernelCall& call) { float_kernel<Lu>(call); }

void qr_kernel(const KernelCall& call) { float_kernel<Qr>(call); }

void geqrf_kernel(const KernelCall& call) { float_kernel<Geqrf>(call); }

void householder_product_kernel(const KernelCall& call) { float_kernel<HouseholderProduct>(call); }

void lu_pivots_to_permutation_kernel(const KernelCall& call) {
  const ir::ValueType& t = *call.inputs[0].type;
  const int64_t k = t.shape.back(), m = call.outputs[0].type->shape.back();
  const int64_t rows = k == 0 ? call.outputs[0].type->num_elements() / std::max<int64_t>(m, 1) : t.num_elements() / k;
  const auto* pivots = static_cast<const int32_t*>(call.inputs[0].data);
  auto* perm = static_cast<int32_t*>(call.outputs[0].data);
  for (int64_t b = 0; b < rows; ++b) pivots_to_permutation(pivots + b * k, k, perm + b * m, m);
}

}  // namespace graft::interpreter
