// graft::linalg (include/graft/linalg.h): lowering to the cholesky,
// triangular_solve and lu primitives, as jnp.linalg and jax.scipy.linalg do.
#include "graft/linalg.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "api/dispatch.h"
#include "api/lowering.h"
#include "graft/autodiff.h"
#include "graft/errors.h"
#include "graft/ops.h"
#include "ir/dtype.h"

namespace graft::linalg {

using detail::bind1;
using ir::Op;

namespace {

// a with its last two axes swapped.
Array swap_last(const Array& a, const Loc& loc) {
  const int rank = static_cast<int>(a.shape().size());
  ir::Ints perm;
  for (int64_t i = 0; i < rank; ++i) perm.push_back(i);
  std::swap(perm[rank - 1], perm[rank - 2]);
  return bind1(Op::transpose, {a}, {{"permutation", perm}}, loc);
}

// a's conjugate transpose over its last two axes (the transpose of a real a).
Array adjoint(const Array& a, const Loc& loc) {
  const Array t = swap_last(a, loc);
  return ir::is_complex(t.dtype()) ? conj(t, loc) : t;
}

// a as a batch of square matrices in a float dtype; a ShapeError naming fn otherwise.
Array square_float(const char* fn, const Array& a, const Loc& loc) {
  const Array f = detail::as_float(a, fn, loc);
  const Shape& s = f.shape();
  if (s.size() < 2 || s[s.size() - 1] != s[s.size() - 2])
    throw ShapeError(std::string(fn) + ": needs square matrices in the last two axes, got " + detail::describe(f) +
                     detail::where(loc));
  return f;
}

// (a + a^H) / 2, as jnp.linalg's symmetrize_input (a Hermitian matrix for a complex a).
Array symmetrized(const Array& f, const Loc& loc) {
  const Array sum = bind1(Op::add, {f, adjoint(f, loc)}, {}, loc);
  return bind1(Op::mul, {sum, full_like(sum, 0.5)}, {}, loc);
}

// op(a)^-1 b (left) or b op(a)^-1 for triangular a: op(a) is a, a^T (transpose) or,
// with conjugate, conj(a) or a^H.
Array tri_solve(const Array& a, const Array& b, bool left, bool lower, bool transpose, bool unit, const Loc& loc,
                bool conjugate = false) {
  return bind1(Op::triangular_solve, {a, b},
               {{"conjugate_a", int64_t{conjugate && ir::is_complex(a.dtype())}},
                {"left_side", int64_t{left}},
                {"lower", int64_t{lower}},
                {"transpose_a", int64_t{transpose}},
                {"unit_diagonal", int64_t{unit}}},
               loc);
}

// b as matrices for a [..., m, m] (a vector gains a last axis), and whether it was a vector.
std::pair<Array, bool> as_matrices(const char* fn, const Array& a, Array b, const Loc& loc) {
  b = detail::as_float(b, fn, loc);
  b = detail::convert(b, ir::promote_types(a.dtype(), b.dtype()), loc);
  const bool vector = b.shape().size() + 1 == a.shape().size();
  if (vector) {
    Shape s = b.shape();
    s.push_back(1);
    b = bind1(Op::reshape, {b}, {{"new_sizes", ir::Ints(s.begin(), s.end())}}, loc);
  }
  return {b, vector};
}

// The batch shape (all but the last `core` axes) of a.
Shape batch_of(const Array& a, size_t core) {
  const Shape& s = a.shape();
  return Shape(s.begin(), s.end() - static_cast<std::ptrdiff_t>(std::min(core, s.size())));
}

// a broadcast to `batch` + its last `core` axes.
Array to_batch(const Array& a, const Shape& batch, size_t core, const Loc& loc) {
  Shape s = batch;
  const Shape& own = a.shape();
  s.insert(s.end(), own.end() - static_cast<std::ptrdiff_t>(core), own.end());
  return s == own ? a : detail::broadcast_to_shape(a, s, loc);
}

// The top-left rows x cols block of a's trailing matrices.
Array block(const Array& a, int64_t rows, int64_t cols, const Loc& loc) {
  const Shape& s = a.shape();
  if (s[s.size() - 2] == rows && s[s.size() - 1] == cols) return a;
  Shape start(s.size(), 0), stop = s;
  stop[s.size() - 2] = rows;
  stop[s.size() - 1] = cols;
  return slice(a, start, stop, {}, loc);
}

// x = a^-1 b from lu(a)'s lu and permutation (p a = l u, so x = u^-1 l^-1 p b),
// as jax.lax.linalg.lu_solve; lu, permutation and b [..., m, k] share their batch shape.
Array lu_solve_core(const Array& lu, const Array& perm, const Array& b, const Loc& loc) {
  // Whole rows of b, perm's batch axes paired with b's: one row copy per index.
  const int64_t rank = static_cast<int64_t>(b.shape().size());
  const Array rows = bind1(Op::gather, {b, perm}, {{"axis", rank - 2}, {"batch_dims", rank - 2}}, loc);
  return tri_solve(lu, tri_solve(lu, rows, true, true, false, true, loc), true, false, false, false, loc);
}

// (sign, log|det|) from an LU factorization: the diagonal's product, the
// sign flipped per row swap and per negative pivot, as JAX's _slogdet_lu;
// for a complex matrix the sign is the product of d / |d| (and log|det| real).
std::pair<Array, Array> slogdet_from_lu(const Array& lu, const Array& pivots, const Loc& loc) {
  const Array d = diagonal(lu, 0, -2, -1, loc);
  const int64_t n = d.shape().back();
  const bool complex = ir::is_complex(d.dtype());
  const Array zero = any(d == 0.0, {-1}, false, loc);
  const Array swaps = sum(astype(pivots != arange(n, DType::i32, loc), DType::i32, loc), {-1}, false, loc);
  const Array negatives = complex ? zeros_like(swaps) : sum(astype(d < 0.0, DType::i32, loc), {-1}, false, loc);
  const Array odd = astype((swaps + negatives) % 2, d.dtype(), loc);
  Array sign = 1.0 - 2.0 * odd;
  if (complex) sign = sign * prod(d / astype(abs(d), d.dtype(), loc), {-1}, false, loc);
  sign = where(zero, zeros_like(sign), sign, loc);
  const Array logdet = sum(log(abs(d)), {-1}, false, loc);
  return {sign, where(zero, full_like(logdet, -std::numeric_limits<double>::infinity()), logdet, loc)};
}

// Entry (i, j) of each trailing matrix of a, keeping the batch axes.
Array entry(const Array& a, int64_t i, int64_t j, const Loc& loc) {
  const Shape& s = a.shape();
  Shape start(s.size(), 0), stop = s;
  start[s.size() - 2] = i, stop[s.size() - 2] = i + 1;
  start[s.size() - 1] = j, stop[s.size() - 1] = j + 1;
  Shape batch = batch_of(a, 2);
  return reshape(slice(a, start, stop, {}, loc), batch, loc);
}

Array from_matrices(const Array& x, bool vector, const Loc& loc) {
  if (!vector) return x;
  const Shape& s = x.shape();
  return bind1(Op::reshape, {x}, {{"new_sizes", ir::Ints(s.begin(), s.end() - 1)}}, loc);
}

}  // namespace

Array cholesky(const Array& a, Loc loc) {
  return bind1(Op::cholesky, {symmetrized(square_float("linalg::cholesky", a, loc), loc)}, {}, loc);
}

std::pair<Array, Array> qr(const Array& a, std::string mode, Loc loc) {
  const char* fn = "linalg::qr";
  if (mode != "reduced" && mode != "complete" && mode != "r")
    throw Error(std::string(fn) + ": mode must be \"reduced\", \"complete\" or \"r\", got \"" + mode + "\"" +
                detail::where(loc));
  const Array f = detail::as_float(a, fn, loc);
  if (f.shape().size() < 2)
    throw ShapeError(std::string(fn) + ": needs matrices in the last two axes, got " + detail::describe(f) +
                     detail::where(loc));
  const std::vector<Array> qr_ = detail::bind(Op::qr, {f}, {{"full_matrices", int64_t{mode == "complete"}}}, loc);
  if (mode == "r") return {Array(), qr_[1]};
  return {qr_[0], qr_[1]};
}

std::pair<Array, Array> geqrf(const Array& a, Loc loc) {
  const Array f = detail::as_float(a, "linalg::geqrf", loc);
  const std::vector<Array> out = detail::bind(Op::geqrf, {f}, {}, loc);
  return {out[0], out[1]};
}

Array householder_product(const Array& a, const Array& taus, Loc loc) {
  const Array f = detail::as_float(a, "linalg::householder_product", loc);
  return bind1(Op::householder_product, {f, detail::convert(taus, f.dtype(), loc)}, {}, loc);
}

std::tuple<Array, Array, Array> svd(const Array& a, bool full_matrices, Loc loc) {
  const Array f = detail::as_float(a, "linalg::svd", loc);
  if (f.shape().size() < 2)
    throw ShapeError("linalg::svd: needs matrices in the last two axes, got " + detail::describe(f) +
                     detail::where(loc));
  const std::vector<Array> suv =
      detail::bind(Op::svd, {f}, {{"compute_uv", int64_t{1}}, {"full_matrices", int64_t{full_matrices}}}, loc);
  return {suv[1], suv[0], suv[2]};
}

Array svdvals(const Array& a, Loc loc) {
  const Array f = detail::as_float(a, "linalg::svdvals", loc);
  if (f.shape().size() < 2)
    throw ShapeError("linalg::svdvals: needs matrices in the last two axes, got " + detail::describe(f) +
                     detail::where(loc));
  return bind1(Op::svd, {f}, {{"compute_uv", int64_t{0}}, {"full_matrices", int64_t{0}}}, loc);
}

std::pair<Array, Array> eigh(const Array& a, Loc loc) {
  const std::vector<Array> vw =
      detail::bind(Op::eigh, {symmetrized(square_float("linalg::eigh", a, loc), loc)}, {{"lower", int64_t{1}}}, loc);
  return {vw[1], vw[0]};
}

Array eigvalsh(const Array& a, Loc loc) {
  return detail::bind(Op::eigh, {symmetrized(square_float("linalg::eigvalsh", a, loc), loc)}, {{"lower", int64_t{1}}},
                      loc)[1];
}

std::pair<Array, Array> eig(const Array& a, Loc loc) {
  const std::vector<Array> wv =
      detail::bind(Op::eig, {square_float("linalg::eig", a, loc)},
                   {{"compute_left_eigenvectors", int64_t{0}}, {"compute_right_eigenvectors", int64_t{1}}}, loc);
  return {wv[0], wv[1]};
}

Array eigvals(const Array& a, Loc loc) {
  return detail::bind(Op::eig, {square_float("linalg::eigvals", a, loc)},
                      {{"compute_left_eigenvectors", int64_t{0}}, {"compute_right_eigenvectors", int64_t{0}}}, loc)[0];
}

Array solve_triangular(const Array& a, const Array& b, bool lower, int trans, bool unit_diagonal, Loc loc) {
  const char* fn = "linalg::solve_triangular";
  if (trans < 0 || trans > 2)
    throw Error(std::string(fn) + ": trans must be 0 (a x = b), 1 (a^T x = b) or 2 (a^H x = b), got " +
                std::to_string(trans) + detail::where(loc));
  Array f = square_float(fn, a, loc);
  auto [bm, vector] = as_matrices(fn, f, b, loc);
  f = detail::convert(f, bm.dtype(), loc);
  return from_matrices(tri_solve(f, bm, true, lower, trans != 0, unit_diagonal, loc, trans == 2), vector, loc);
}

std::pair<Array, bool> cho_factor(const Array& a, bool lower, Loc loc) {
  const Array f = square_float("linalg::cho_factor", a, loc);
  // The factor of the upper triangle is the transpose of the lower factor of a^T.
  const Array l = bind1(Op::cholesky, {lower ? f : swap_last(f, loc)}, {}, loc);
  return {lower ? l : swap_last(l, loc), lower};
}

Array cho_solve(std::pair<Array, bool> c_lower, const Array& b, Loc loc) {
  const char* fn = "linalg::cho_solve";
  const auto& [c, lower] = c_lower;
  Array f = square_float(fn, c, loc);
  auto [bm, vector] = as_matrices(fn, f, b, loc);
  f = detail::convert(f, bm.dtype(), loc);
  // a = L L^H: solve L y = b, then L^H x = y (or U^H y = b, U x = y).
  const Array y = tri_solve(f, bm, true, lower, !lower, false, loc, !lower);
  return from_matrices(tri_solve(f, y, true, lower, lower, false, loc, lower), vector, loc);
}

std::tuple<Array, Array, Array> lu(const Array& a, Loc loc) {
  const Array f = detail::as_float(a, "linalg::lu", loc);
  if (f.shape().size() < 2)
    throw ShapeError("linalg::lu: needs matrices in the last two axes, got " + detail::describe(f) + detail::where(loc));
  const std::vector<Array> out = detail::bind(Op::lu, {f}, {}, loc);  // lu, pivots and the permutation itself
  const Array &lu_ = out[0], &perm = out[2];
  const Shape& s = lu_.shape();
  const int64_t m = s[s.size() - 2], n = s[s.size() - 1], k = std::min(m, n);
  const Array l = tril(block(lu_, m, k, loc), -1, loc) + block(eye(std::max(m, n), lu_.dtype(), loc), m, k, loc);
  const Array u = triu(block(lu_, k, n, loc), 0, loc);
  // p[..., i, j] = (perm[j] == i): a = p l u.
  const Array p =
      astype(expand_dims(perm, -2, loc) == expand_dims(arange(m, DType::i32, loc), -1, loc), lu_.dtype(), loc);
  return {p, l, u};
}

std::pair<Array, Array> lu_factor(const Array& a, Loc loc) {
  const Array f = detail::as_float(a, "linalg::lu_factor", loc);
  if (f.shape().size() < 2)
    throw ShapeError("linalg::lu_factor: needs matrices in the last two axes, got " + detail::describe(f) +
                     detail::where(loc));
  const std::vector<Array> out = detail::bind(Op::lu, {f}, {}, loc);
  return {out[0], out[1]};
}

Array lu_solve(std::pair<Array, Array> lu_piv, const Array& b, Loc loc) {
  const char* fn = "linalg::lu_solve";
  const Array f = square_float(fn, lu_piv.first, loc);
  const int64_t m = f.shape().back();
  const Array& piv = lu_piv.second;
  if (piv.dtype() != DType::i32 || piv.shape() != batch_of(f, 1))
    throw ShapeError(std::string(fn) + ": the pivots must be i32" + ir::shape_str(batch_of(f, 1)) + " for lu " +
                     detail::describe(f) + ", got " + detail::describe(piv) + detail::where(loc));
  auto [bm, vector] = as_matrices(fn, f, b, loc);
  if (bm.shape().size() < 2 || bm.shape()[bm.shape().size() - 2] != m)
    throw ShapeError(std::string(fn) + ": b must have " + std::to_string(m) + " rows for lu " + detail::describe(f) +
                     ", got " + detail::describe(b) + detail::where(loc));
  const Array perm = bind1(Op::lu_pivots_to_permutation, {piv}, {{"permutation_size", m}}, loc);
  const Shape batch = detail::broadcast_shapes(fn, {batch_of(f, 2), batch_of(bm, 2)}, loc);
  const Array lu_b = detail::convert(to_batch(f, batch, 2, loc), bm.dtype(), loc);
  const Array x = lu_solve_core(lu_b, to_batch(perm, batch, 1, loc), to_batch(bm, batch, 2, loc), loc);
  return from_matrices(x, vector, loc);
}

Array solve(const Array& a, const Array& b, Loc loc) {
  const char* fn = "linalg::solve";
  Array f = square_float(fn, a, loc);
  const int64_t m = f.shape().back();
  Array bm = detail::as_float(b, fn, loc);
  const DType dtype = ir::promote_types(f.dtype(), bm.dtype());
  f = detail::convert(f, dtype, loc);
  bm = detail::convert(bm, dtype, loc);
  const bool vector = bm.shape().size() == 1;  // as JAX since 0.5: only a 1-D b is a vector
  if (vector) bm = expand_dims(bm, -1, loc);
  if (bm.shape().size() < 2 || bm.shape()[bm.shape().size() - 2] != m)
    throw ShapeError(std::string(fn) + ": b must be [..., " + std::to_string(m) + ", k] or [" + std::to_string(m) +
                     "] for a " + detail::describe(f) + ", got " + detail::describe(b) + detail::where(loc));
  const Shape batch = detail::broadcast_shapes(fn, {batch_of(f, 2), batch_of(bm, 2)}, loc);
  // One factorization per matrix of a, broadcast to b's batch afterwards.
  const std::vector<Array> out = detail::bind(Op::lu, {f}, {}, loc);
  const Array x =
      lu_solve_core(to_batch(out[0], batch, 2, loc), to_batch(out[2], batch, 1, loc), to_batch(bm, batch, 2, loc), loc);
  return from_matrices(x, vector, loc);
}

Array inv(const Array& a, Loc loc) {
  const Array f = square_float("linalg::inv", a, loc);
  return solve(f, detail::broadcast_to_shape(eye(f.shape().back(), f.dtype(), loc), f.shape(), loc), loc);
}

namespace {

std::pair<Array, Array> slogdet_value(const Array& f, const Loc& loc) {
  const int64_t n = f.shape().back();
  if (n == 1 || n == 2) {  // closed forms, as JAX
    const Array det = n == 1 ? entry(f, 0, 0, loc)
                             : entry(f, 0, 0, loc) * entry(f, 1, 1, loc) - entry(f, 0, 1, loc) * entry(f, 1, 0, loc);
    return {sign(det), log(abs(det))};
  }
  const std::vector<Array> out = detail::bind(Op::lu, {f}, {}, loc);
  return slogdet_from_lu(out[0], out[1], loc);
}

}  // namespace

std::pair<Array, Array> slogdet(const Array& a, Loc loc) {
  const Array f = square_float("linalg::slogdet", a, loc);
  if (!ir::is_complex(f.dtype())) return slogdet_value(f, loc);  // differentiated through lu: trace(a^-1 a')
  // JAX's rule for a complex a: t = trace(a^-1 a'), log|det|' = re(t) and
  // sign' = i im(t) sign (the sign's phase turns with the imaginary part).
  auto value = [loc](const Array& x) { return slogdet_value(x, loc); };
  auto with_rule = custom_jvp(value, [loc](const std::tuple<Array>& p, const std::tuple<Array>& t) {
    const Array& x = std::get<0>(p);
    const auto [s, logdet] = slogdet_value(x, loc);
    const Array dt = trace(solve(x, std::get<0>(t), loc), 0, -2, -1, loc);
    const Array ds = (dt - astype(real(dt, loc), dt.dtype(), loc)) * s;
    return std::make_pair(std::make_pair(s, logdet), std::make_pair(ds, real(dt, loc)));
  });
  return with_rule(f);
}

namespace {

// (det a, adj(a) b) for a and b [..., n, n], as JAX's _cofactor_solve: from
// P a = L U, with U's last pivot replaced by 1 / (the product of the others)
// so that the solve stays finite when a has rank n - 1, and adj(a) = 0 when
// the rank is lower (a solve against U's first n - 1 pivots overflows).
std::pair<Array, Array> cofactor_solve(const Array& a, const Array& b, const Loc& loc) {
  const int64_t n = a.shape().back();
  if (n == 1) return {entry(a, 0, 0, loc), b};
  const std::vector<Array> out = detail::bind(Op::lu, {a}, {}, loc);
  const Array& pivots = out[1];
  const int rank = static_cast<int>(a.shape().size());
  const Array d = diagonal(out[0], 0, -2, -1, loc);
  const Array swaps = sum(astype(pivots != arange(n, DType::i32, loc), DType::i32, loc), {-1}, false, loc);
  const Array sign = 1.0 - 2.0 * astype(swaps % 2, a.dtype(), loc);
  const Array partial = cumprod(d, -1, false, loc) * expand_dims(sign, -1, loc);  // [..., n]
  auto last = [&](const Array& v, int64_t i) {                                    // v[..., i] keeping the axis
    Shape lo(v.shape().size(), 0), hi = v.shape();
    lo.back() = i;
    hi.back() = i + 1;
    return slice(v, lo, hi, {}, loc);
  };
  // lu with its last diagonal entry 1 / partial[..., n - 2].
  const Array rows = bind1(Op::iota, {},
                           {{"dtype", DType::i32},
                            {"shape", ir::Ints(a.shape().begin(), a.shape().end())},
                            {"dimension", int64_t{rank - 2}}},
                           loc);
  const Array cols = bind1(Op::iota, {},
                           {{"dtype", DType::i32},
                            {"shape", ir::Ints(a.shape().begin(), a.shape().end())},
                            {"dimension", int64_t{rank - 1}}},
                           loc);
  const Array corner = logical_and(rows == static_cast<int32_t>(n - 1), cols == static_cast<int32_t>(n - 1), loc);
  const Array lu = where(corner, expand_dims(1.0 / last(partial, n - 2), -1, loc), out[0], loc);
  Shape ones_shape = batch_of(a, 2);
  ones_shape.push_back(n);
  ones_shape.push_back(1);
  const Array probe = tri_solve(lu, ones(ones_shape, a.dtype(), loc), true, false, false, false, loc);
  const Array low_rank = any(logical_or(isnan(probe), isinf(probe), loc), {-2, -1}, true, loc);
  Array x = where(low_rank, zeros_like(b), b, loc);
  x = bind1(Op::gather, {x, out[2]}, {{"axis", int64_t{rank - 2}}, {"batch_dims", int64_t{rank - 2}}}, loc);
  x = tri_solve(lu, x, true, true, false, true, loc);
  Shape lo(x.shape().size(), 0), mid = x.shape();
  mid[mid.size() - 2] = n - 1;
  Shape lo2 = lo;
  lo2[lo2.size() - 2] = n - 1;
  x = concatenate(
      {slice(x, lo, mid, {}, loc) * expand_dims(last(partial, n - 1), -1, loc), slice(x, lo2, x.shape(), {}, loc)},
      rank - 2, loc);
  x = tri_solve(lu, x, true, false, false, false, loc);
  x = where(low_rank, zeros_like(x), x, loc);
  return {reshape(last(partial, n - 1), batch_of(a, 2), loc), x};
}

}  // namespace

Array det(const Array& a, Loc loc) {
  const Array f = square_float("linalg::det", a, loc);
  const int64_t n = f.shape().back();
  auto e = [&](int64_t i, int64_t j) { return entry(f, i, j, loc); };
  if (n == 2) return e(0, 0) * e(1, 1) - e(0, 1) * e(1, 0);
  if (n == 3)  // JAX's expansion, term for term
    return e(0, 0) * e(1, 1) * e(2, 2) + e(0, 1) * e(1, 2) * e(2, 0) + e(0, 2) * e(1, 0) * e(2, 1) -
           e(0, 2) * e(1, 1) * e(2, 0) - e(0, 0) * e(1, 2) * e(2, 1) - e(0, 1) * e(1, 0) * e(2, 2);
  // sign * exp(log|det|), with JAX's derivative trace(adj(a) a'): finite at a singular a.
  auto value = [loc](const Array& x) {
    const auto [s, logdet] = slogdet(x, loc);
    return s * exp(logdet);
  };
  auto with_rule = custom_jvp(value, [loc](const std::tuple<Array>& p, const std::tuple<Array>& t) {
    const auto [y, z] = cofactor_solve(std::get<0>(p), std::get<0>(t), loc);
    return std::make_pair(y, trace(z, 0, -2, -1, loc));
  });
  return with_rule(f);
}

namespace {

// (m, n) of a's trailing matrices; a ShapeError naming fn below rank 2.
std::pair<int64_t, int64_t> matrix_dims(const char* fn, const Array& f, const Loc& loc) {
  const Shape& s = f.shape();
  if (s.size() < 2)
    throw ShapeError(std::string(fn) + ": needs matrices in the last two axes, got " + detail::describe(f) +
                     detail::where(loc));
  return {s[s.size() - 2], s[s.size() - 1]};
}

// The pseudo-inverse of f from its reduced SVD: singular values at or below
// tol * the largest count as zero (JAX's pinv).
Array pinv_from_svd(const Array& f, double tol, const Loc& loc) {
  const auto [u, s, vt] = svd(f, false, loc);
  const Shape& ss = s.shape();
  Shape lo(ss.size(), 0), hi = ss;
  hi.back() = 1;
  const Array cutoff = tol * slice(s, lo, hi, {}, loc);
  const Array kept = where(s > cutoff, s, full_like(s, std::numeric_limits<double>::infinity()), loc);
  return matmul(adjoint(vt, loc), adjoint(u, loc) / expand_dims(astype(kept, u.dtype(), loc), -1, loc), loc);
}

}  // namespace

Array matrix_power(const Array& a, int64_t n, Loc loc) {
  Array f = square_float("linalg::matrix_power", a, loc);
  if (n == 0) return detail::broadcast_to_shape(eye(f.shape().back(), f.dtype(), loc), f.shape(), loc);
  if (n < 0) {
    f = inv(f, loc);
    n = -n;
  }
  // Binary powering, as JAX's: z runs through f^(2^i), the result gathers the set bits.
  std::optional<Array> z, result;
  for (; n > 0; n /= 2) {
    z = z ? matmul(*z, *z, loc) : f;
    if (n % 2) result = result ? matmul(*result, *z, loc) : *z;
  }
  return *result;
}

Array pinv(const Array& a, std::optional<double> rtol, Loc loc) {
  const char* fn = "linalg::pinv";
  const Array f = detail::as_float(a, fn, loc);
  // Plain names, not a structured binding: the rule below captures them, which clang refuses under OpenMP.
  const auto dims = matrix_dims(fn, f, loc);
  const int64_t m = dims.first, n = dims.second;
  if (m == 0 || n == 0) {
    Shape s = batch_of(f, 2);
    s.push_back(n);
    s.push_back(m);
    return zeros(s, f.dtype(), loc);
  }
  const double tol = rtol ? *rtol : 10.0 * static_cast<double>(std::max(m, n)) * detail::eps_of(f.dtype());
  // JAX's derivative (Golub and Pereyra): P' = -P A' P + P P^T A'^T (I - A P) + (I - P A) A'^T P^T P,
  // which holds where the rank does not change (through the SVD it would not where singular values repeat).
  auto value = [tol, loc](const Array& x) { return pinv_from_svd(x, tol, loc); };
  auto fn_with_rule = custom_jvp(value, [tol, loc, m, n](const std::tuple<Array>& p, const std::tuple<Array>& t) {
    const Array& x = std::get<0>(p);
    const Array& dx = std::get<0>(t);
    const Array pm = pinv_from_svd(x, tol, loc);
    const Array pt = adjoint(pm, loc), dxt = adjoint(dx, loc);
    const Array eye_m = eye(m, x.dtype(), loc), eye_n = eye(n, x.dtype(), loc);
    Array dp = -matmul(matmul(pm, dx, loc), pm, loc);
    dp = dp + matmul(matmul(matmul(pm, pt, loc), dxt, loc), eye_m - matmul(x, pm, loc), loc);
    dp = dp + matmul(matmul(matmul(eye_n - matmul(pm, x, loc), dxt, loc), pt, loc), pm, loc);
    return std::make_pair(pm, dp);
  });
  return fn_with_rule(f);
}

Array lstsq(const Array& a, const Array& b, std::optional<double> rcond, Loc loc) {
  const char* fn = "linalg::lstsq";
  Array f = detail::as_float(a, fn, loc);
  Array bm = detail::as_float(b, fn, loc);
  const DType dtype = ir::promote_types(f.dtype(), bm.dtype());
  f = detail::convert(f, dtype, loc);
  bm = detail::convert(bm, dtype, loc);
  const auto [m, n] = matrix_dims(fn, f, loc);
  const bool vector = bm.shape().size() == 1;
  if (vector) bm = expand_dims(bm, -1, loc);
  if (bm.shape().size() < 2 || bm.shape()[bm.shape().size() - 2] != m)
    throw ShapeError(std::string(fn) + ": b must be [" + std::to_string(m) + "] or [..., " + std::to_string(m) +
                     ", k] for a " + detail::describe(f) + ", got " + detail::describe(b) + detail::where(loc));
  const double r =
      rcond ? (*rcond < 0 ? detail::eps_of(dtype) : *rcond) : detail::eps_of(dtype) * static_cast<double>(std::max(m, n));
  // x = V diag(1/s) U^T b over the singular values >= r * the largest (JAX's lstsq).
  const auto [u, s, vt] = svd(f, false, loc);
  const Shape& ss = s.shape();
  Shape lo(ss.size(), 0), hi = ss;
  hi.back() = std::min<int64_t>(1, hi.back());
  const Array keep = s >= r * slice(s, lo, hi, {}, loc);
  const Array s_inv = where(keep, 1.0 / where(keep, s, full_like(s, 1.0), loc), full_like(s, 0.0), loc);
  const Array x = matmul(adjoint(vt, loc),
                         expand_dims(astype(s_inv, u.dtype(), loc), -1, loc) * matmul(adjoint(u, loc), bm, loc), loc);
  return from_matrices(x, vector, loc);
}

Array matrix_rank(const Array& a, std::optional<double> rtol, Loc loc) {
  const char* fn = "linalg::matrix_rank";
  const Array f = detail::as_float(a, fn, loc);
  const auto [m, n] = matrix_dims(fn, f, loc);
  const double tol = rtol ? *rtol : static_cast<double>(std::max(m, n)) * detail::eps_of(f.dtype());
  const Array s = svdvals(f, loc);
  return sum(astype(s > tol * max(s, {-1}, true, loc), DType::i32, loc), {-1}, false, loc);
}

namespace {

// The vector norm of ord along `axis` (NumPy's cases: inf, -inf, 0, 1, 2, any p).
Array vector_norm(const Array& f, double ord, int axis, bool keepdims, const Loc& loc) {
  const std::vector<int> axes{axis};
  const Array a = abs(f);
  if (std::isinf(ord)) return ord > 0 ? max(a, axes, keepdims, loc) : min(a, axes, keepdims, loc);
  if (ord == 0) return sum(astype(f != 0.0, f.dtype(), loc), axes, keepdims, loc);
  if (ord == 1) return sum(a, axes, keepdims, loc);
  if (ord == 2) return sqrt(sum(a * a, axes, keepdims, loc));
  return pow(sum(pow(a, ord, loc), axes, keepdims, loc), 1.0 / ord, loc);
}

// f with axes r and c moved last (in that order).
Array move_last(const Array& f, int r, int c, const Loc& loc) {
  std::vector<int> perm;
  for (int i = 0; i < static_cast<int>(f.shape().size()); ++i)
    if (i != r && i != c) perm.push_back(i);
  perm.push_back(r);
  perm.push_back(c);
  return transpose(f, perm, loc);
}

// A reduction over the last two axes given back its axes r and c (size 1) when keepdims.
Array restore(const Array& x, const Shape& shape, int r, int c, bool keepdims, const Loc& loc) {
  if (!keepdims) return x;
  Shape s = shape;
  s[static_cast<size_t>(r)] = 1;
  s[static_cast<size_t>(c)] = 1;
  return reshape(x, s, loc);
}

// The matrix norm ("fro", "nuc", or 1, -1, 2, -2, inf, -inf) over axes (r, c).
Array matrix_norm(const Array& f, const std::string& name, double ord, int r, int c, bool keepdims, const Loc& loc) {
  const char* fn = "linalg::norm";
  if (name == "fro") return sqrt(sum(abs(f) * abs(f), {r, c}, keepdims, loc));
  if (name == "nuc" || ord == 2 || ord == -2) {
    const Array s = svdvals(move_last(f, r, c, loc), loc);
    const Array v = name == "nuc" ? sum(s, {-1}, false, loc)
                    : ord == 2    ? max(s, {-1}, false, loc)
                                  : min(s, {-1}, false, loc);
    return restore(v, f.shape(), r, c, keepdims, loc);
  }
  if (!name.empty())
    throw Error(std::string(fn) + ": a matrix norm's ord is \"fro\", \"nuc\", 1, -1, 2, -2, inf or -inf, got \"" +
                name + "\"" + detail::where(loc));
  if (ord == 1 || ord == -1 || std::isinf(ord)) {
    // 1: the largest column sum (over rows, then across columns); inf: the largest row sum.
    const bool columns = ord == 1 || ord == -1;
    const int inner = columns ? r : c;
    int outer = columns ? c : r;
    if (outer > inner) --outer;
    const Array sums = sum(abs(f), {inner}, false, loc);
    const Array v = ord > 0 ? max(sums, {outer}, false, loc) : min(sums, {outer}, false, loc);
    return restore(v, f.shape(), r, c, keepdims, loc);
  }
  throw Error(std::string(fn) + ": a matrix norm's ord is \"fro\", \"nuc\", 1, -1, 2, -2, inf or -inf, got " +
              std::to_string(ord) + detail::where(loc));
}

Array norm_impl(const Array& x, const std::string& name, double ord, std::vector<int> axes, bool keepdims,
                const Loc& loc) {
  const char* fn = "linalg::norm";
  const Array f = detail::as_float(x, fn, loc);
  const int rank = static_cast<int>(f.shape().size());
  if (axes.empty()) {
    if (rank == 1)
      axes = {0};
    else if (rank == 2)
      axes = {0, 1};
    else
      throw ShapeError(std::string(fn) + ": with an ord, the axes must be given for " + detail::describe(f) +
                       " (a vector norm over 1 axis, a matrix norm over 2)" + detail::where(loc));
  }
  for (int& a : axes) a = detail::normalize_axis(fn, a, rank, loc);
  if (axes.size() == 1) {
    if (!name.empty())
      throw Error(std::string(fn) + ": \"" + name + "\" is a matrix norm; a vector norm takes a number" +
                  detail::where(loc));
    return vector_norm(f, ord, axes[0], keepdims, loc);
  }
  if (axes.size() != 2 || axes[0] == axes[1])
    throw ShapeError(std::string(fn) + ": axes must name 1 axis (a vector norm) or 2 different ones (a matrix norm)" +
                     detail::where(loc));
  return matrix_norm(f, name, ord, axes[0], axes[1], keepdims, loc);
}

}  // namespace

Array norm(const Array& x, Loc loc) {
  const Array f = detail::as_float(x, "linalg::norm", loc);
  return sqrt(sum(abs(f) * abs(f), {}, false, loc));
}

Array norm(const Array& x, double ord, std::vector<int> axes, bool keepdims, Loc loc) {
  return norm_impl(x, "", ord, std::move(axes), keepdims, loc);
}

Array norm(const Array& x, const std::string& ord, std::vector<int> axes, bool keepdims, Loc loc) {
  if (ord != "fro" && ord != "nuc")
    throw Error("linalg::norm: ord must be a number, \"fro\" or \"nuc\", got \"" + ord + "\"" + detail::where(loc));
  return norm_impl(x, ord, 0, axes.empty() ? std::vector<int>{-2, -1} : std::move(axes), keepdims, loc);
}

}  // namespace graft::linalg
