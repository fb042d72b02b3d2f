// graft::linalg: linear algebra as jnp.linalg and jax.scipy.linalg. Leading
// axes are batch axes; integer arrays compute in the default float dtype.
// f32, f64, c64 and c128 are LAPACK's types and JAX's (f16 and bf16 are a
// DTypeError, as in JAX); for complex matrices a^T below reads a^H (the
// conjugate transpose) and "symmetric" reads Hermitian.
// Derivatives are JAX's (jax/_src/lax/linalg.py), in forward and reverse
// mode; vmap adds a batch axis. Factorizations of a matrix that does not
// have one (a Cholesky factor of a matrix that is not positive definite)
// are NaNs, as in JAX, not exceptions.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "graft/array.h"
#include "graft/detail/source_location.h"

namespace graft::linalg {

using Loc = std::source_location;

// The lower Cholesky factor L of each matrix, a = L L^T, of a [..., n, n];
// a is symmetrized first ((a + a^T) / 2), as jnp.linalg.cholesky. NaNs where
// a is not positive definite.
Array cholesky(const Array& a, Loc loc = Loc::current());

// x solving a x = b for triangular a, as jax.scipy.linalg.solve_triangular:
// only a's lower (or upper) triangle is read; trans 0 solves a x = b, 1 and 2
// a^T x = b; unit_diagonal takes a's diagonal as ones. a is [..., m, m]; b is
// [..., m, n], or [..., m] when b.ndim() == a.ndim() - 1; batch axes equal.
Array solve_triangular(const Array& a, const Array& b, bool lower = false, int trans = 0, bool unit_diagonal = false,
                       Loc loc = Loc::current());

// (c, lower) for cho_solve: c the lower (or upper) Cholesky factor of a,
// read from that triangle of a without symmetrizing, as jax.scipy.linalg.
std::pair<Array, bool> cho_factor(const Array& a, bool lower = true, Loc loc = Loc::current());

// x solving a x = b given cho_factor(a): two triangular solves.
Array cho_solve(std::pair<Array, bool> c_lower, const Array& b, Loc loc = Loc::current());

// (q, r) with a = q r, as jnp.linalg.qr (Householder, LAPACK's geqrf and
// orgqr; r's diagonal may be negative, as theirs): for a [..., m, n] and
// k = min(m, n), mode "reduced" gives q [..., m, k] and r [..., k, n],
// "complete" q [..., m, m] and r [..., m, n], "r" only r (q is an empty
// Array). Derivatives, as JAX's, for m >= n and the reduced factorization.
std::pair<Array, Array> qr(const Array& a, std::string mode = "reduced", Loc loc = Loc::current());

// (u, s, vh) with a = u diag(s) vh, as jnp.linalg.svd: s [..., k] descending
// (k = min(m, n)); u [..., m, m] and vh [..., n, n] with full_matrices, else
// [..., m, k] and [..., k, n]. Singular vectors' signs are LAPACK's (gesdd),
// as NumPy's and JAX's. Derivatives are JAX's, defined for the reduced (or a
// square) factorization; where singular values repeat u's and vh's are
// infs and NaNs, as JAX's.
std::tuple<Array, Array, Array> svd(const Array& a, bool full_matrices = true, Loc loc = Loc::current());

// The singular values of each matrix, descending (differentiable: s' = diag(u^T a' v)).
Array svdvals(const Array& a, Loc loc = Loc::current());

// (w, v) of each symmetric matrix: the eigenvalues ascending and orthonormal
// eigenvectors in the columns of v (a v = v diag(w)), as jnp.linalg.eigh; a is
// symmetrized first. An eigenvector's sign (phase) is whatever LAPACK's
// syevd (heevd) gives, as JAX's. Derivatives are JAX's: where eigenvalues repeat, v's are
// infs and NaNs (as JAX's) and w's stay finite.
std::pair<Array, Array> eigh(const Array& a, Loc loc = Loc::current());

// The eigenvalues of eigh(a), ascending.
Array eigvalsh(const Array& a, Loc loc = Loc::current());

// (w, v) of each general square matrix: the eigenvalues w [..., n] and the
// right eigenvectors in v's columns (a v = v diag(w)), complex (c64 for f32
// and c64, c128 for f64 and c128), as jnp.linalg.eig: LAPACK's geev, its
// order, each vector of unit norm with its largest component real. Not
// differentiable, as JAX's (eigenvectors' derivatives hold only for distinct
// eigenvalues): differentiate eigvals.
std::pair<Array, Array> eig(const Array& a, Loc loc = Loc::current());

// The eigenvalues of eig(a), as jnp.linalg.eigvals; differentiable (JAX's
// rule: w' = diag(v^-1 a' v)).
Array eigvals(const Array& a, Loc loc = Loc::current());

// (p, l, u) with a = p l u, as jax.scipy.linalg.lu: for a [..., m, n] and
// k = min(m, n), p is the m x m permutation matrix, l the m x k unit lower
// factor, u the k x n upper factor (partial pivoting, LAPACK's getrf).
std::tuple<Array, Array, Array> lu(const Array& a, Loc loc = Loc::current());

// (lu, piv) for lu_solve: l below the diagonal and u on and above it in one
// matrix, and the i32 row swaps (row i with row piv[i], in order).
std::pair<Array, Array> lu_factor(const Array& a, Loc loc = Loc::current());

// x solving a x = b given lu_factor(a); b is [..., m, k], or [..., m] when
// b.ndim() == a.ndim() - 1; batch axes broadcast.
Array lu_solve(std::pair<Array, Array> lu_piv, const Array& b, Loc loc = Loc::current());

// x solving a x = b for square a [..., m, m] (LU with partial pivoting); b is
// [..., m, k], or a vector [m] only when b.ndim() == 1 (as JAX since 0.5);
// batch axes broadcast. A singular a gives infs and NaNs, not an exception.
Array solve(const Array& a, const Array& b, Loc loc = Loc::current());

// The inverse of each matrix: solve(a, I).
Array inv(const Array& a, Loc loc = Loc::current());

// The determinant of each matrix ([..., n, n] -> [...]): closed forms for
// n = 2 and 3, sign * exp(logabsdet) above, as jnp.linalg.det, whose
// derivative trace(adj(a) a') this has too (finite at a singular a).
Array det(const Array& a, Loc loc = Loc::current());

// (sign, log|det|) of each matrix: sign 0 and log|det| -inf for a singular
// one; the derivative of log|det| is trace(a^-1 a').
std::pair<Array, Array> slogdet(const Array& a, Loc loc = Loc::current());

// a^n for a square a and an integer n (negative: inv(a)^-n; 0: the
// identity), by repeated squaring as jnp.linalg.matrix_power.
Array matrix_power(const Array& a, int64_t n, Loc loc = Loc::current());

// The Moore-Penrose pseudo-inverse [..., n, m] of a [..., m, n], from the
// SVD: singular values at or below rtol times the largest count as zero
// (rtol defaults to 10 max(m, n) eps, as jnp.linalg.pinv). Its derivative is
// JAX's (Golub-Pereyra), right wherever the rank does not change.
Array pinv(const Array& a, std::optional<double> rtol = std::nullopt, Loc loc = Loc::current());

// The least-squares (minimum-norm) x of a x = b, as jnp.linalg.lstsq's
// solution: from the SVD, singular values below rcond times the largest
// dropped (rcond defaults to max(m, n) eps; negative means eps). b is [m]
// (only when 1-D) or [..., m, k]; batch axes broadcast.
Array lstsq(const Array& a, const Array& b, std::optional<double> rcond = std::nullopt, Loc loc = Loc::current());

// The number of singular values above rtol times the largest (i32, [...]),
// rtol defaulting to max(m, n) eps, as jnp.linalg.matrix_rank.
Array matrix_rank(const Array& a, std::optional<double> rtol = std::nullopt, Loc loc = Loc::current());

// sqrt(sum |x|^2) over every entry (jnp.linalg.norm(x)).
Array norm(const Array& x, Loc loc = Loc::current());

// The norm of ord over `axes`, as jnp.linalg.norm: one axis gives the vector
// norm (inf, -inf, 0, 1, 2 or any p: (sum |x|^p)^(1/p)), two the matrix norm
// (1, -1 and inf, -inf: the largest or smallest column or row sum of |x|;
// 2, -2: the largest or smallest singular value). No axes means the only one
// of a vector or both of a matrix. keepdims keeps the reduced axes (size 1).
Array norm(const Array& x, double ord, std::vector<int> axes = {}, bool keepdims = false, Loc loc = Loc::current());

// The Frobenius ("fro") or nuclear ("nuc", the sum of singular values) norm
// over two axes (default the last two).
Array norm(const Array& x, const std::string& ord, std::vector<int> axes = {}, bool keepdims = false,
           Loc loc = Loc::current());

// e^a of each square matrix of a [..., n, n], as jax.scipy.linalg.expm:
// scaling and squaring with Padé approximants of degree 3 to 13 (f64) or 3
// to 7 (f32); NaNs where a's 1-norm needs more than 16 squarings.
Array expm(const Array& a, Loc loc = Loc::current());

// LAPACK's Householder QR of a [..., m, n] in its packed form, as
// jax.lax.linalg.geqrf: (r on and above the diagonal with the reflectors'
// vectors below it, their taus [..., min(m, n)]). Not differentiable (JAX
// defines no derivative).
std::pair<Array, Array> geqrf(const Array& a, Loc loc = Loc::current());

// The first n columns [..., m, n] of the product H_0 .. H_(k-1) of the
// Householder reflectors that a [..., m, n] (m >= n) holds below its
// diagonal and taus [..., k] scale (LAPACK's orgqr), as
// jax.lax.linalg.householder_product: q of geqrf's packed factorization.
Array householder_product(const Array& a, const Array& taus, Loc loc = Loc::current());

// A function of one array, such as a linear map x -> A x.
using ArrayFunction = std::function<Array(const Array&)>;
// solve(matvec, b): the x with matvec(x) = b.
using LinearSolve = std::function<Array(const ArrayFunction& matvec, const Array& b)>;
// solve(f, initial_guess): an x with f(x) = 0.
using RootSolve = std::function<Array(const ArrayFunction& f, const Array& initial_guess)>;

// solve(matvec, b), differentiated implicitly as jax.lax.custom_linear_solve:
// x' = A^-1 (b' - A' x) with A^-1 applied by solve, and in reverse mode by
// transpose_solve(vecmat, ct) (solve itself when symmetric), never by
// differentiating solve's steps (an iterative solver's while_loop needs no
// derivative). Arrays that matvec closes over are A's parameters; x has b's
// type. Reverse mode without transpose_solve or symmetric is an
// UnsupportedError.
Array custom_linear_solve(const ArrayFunction& matvec, const Array& b, const LinearSolve& solve,
                          const LinearSolve& transpose_solve = {}, bool symmetric = false, Loc loc = Loc::current());

// The root x* = solve(f, initial_guess) of f(x) = 0, differentiated
// implicitly as jax.lax.custom_root: x*' = -(df/dx)^-1 (df/dtheta theta') for
// the arrays theta that f closes over, the inverse applied by
// tangent_solve(g, y) (solving g(x) = y for the linear g = df/dx at x*; for
// a scalar, y / g(1)). No derivative flows to initial_guess.
Array custom_root(const ArrayFunction& f, const Array& initial_guess, const RootSolve& solve,
                  const LinearSolve& tangent_solve, Loc loc = Loc::current());

}  // namespace graft::linalg
