// graft::linalg (include/graft/linalg.h): lowering to the cholesky,
// triangular_solve and lu primitives, as jnp.linalg and jax.scipy.linalg do.
#include "graft/linalg.h"

#include <algorithm>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "api/dispatch.h"
#include "api/lowering.h"
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

// a as a batch of square matrices in a float dtype; a ShapeError naming fn otherwise.
Array square_float(const char* fn, const Array& a, const Loc& loc) {
  const Array f = detail::as_float(a, fn, loc);
  const Shape& s = f.shape();
  if (s.size() < 2 || s[s.size() - 1] != s[s.size() - 2])
    throw ShapeError(std::string(fn) + ": needs square matrices in the last two axes, got " + detail::describe(f) +
                     detail::where(loc));
  return f;
}

// (a + a^T) / 2, as jnp.linalg's symmetrize_input.
Array symmetrized(const Array& f, const Loc& loc) {
  const Array sum = bind1(Op::add, {f, swap_last(f, loc)}, {}, loc);
  return bind1(Op::mul, {sum, full_like(sum, 0.5)}, {}, loc);
}

Array tri_solve(const Array& a, const Array& b, bool left, bool lower, bool transpose, bool unit, const Loc& loc) {
  return bind1(Op::triangular_solve, {a, b},
               {{"left_side", int64_t{left}},
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
// sign flipped per row swap and per negative pivot, as JAX's _slogdet_lu.
std::pair<Array, Array> slogdet_from_lu(const Array& lu, const Array& pivots, const Loc& loc) {
  const Array d = diagonal(lu, 0, -2, -1, loc);
  const int64_t n = d.shape().back();
  const Array zero = any(d == 0.0, {-1}, false, loc);
  const Array swaps = sum(astype(pivots != arange(n, DType::i32, loc), DType::i32, loc), {-1}, false, loc);
  const Array negatives = sum(astype(d < 0.0, DType::i32, loc), {-1}, false, loc);
  const Array odd = astype((swaps + negatives) % 2, d.dtype(), loc);
  const Array sign = where(zero, full_like(odd, 0.0), 1.0 - 2.0 * odd, loc);
  const Array logdet =
      where(zero, full_like(odd, -std::numeric_limits<double>::infinity()), sum(log(abs(d)), {-1}, false, loc), loc);
  return {sign, logdet};
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

Array solve_triangular(const Array& a, const Array& b, bool lower, int trans, bool unit_diagonal, Loc loc) {
  const char* fn = "linalg::solve_triangular";
  if (trans < 0 || trans > 2)
    throw Error(std::string(fn) + ": trans must be 0 (a x = b), 1 (a^T x = b) or 2 (a^H x = b), got " +
                std::to_string(trans) + detail::where(loc));
  Array f = square_float(fn, a, loc);
  auto [bm, vector] = as_matrices(fn, f, b, loc);
  f = detail::convert(f, bm.dtype(), loc);
  return from_matrices(tri_solve(f, bm, true, lower, trans != 0, unit_diagonal, loc), vector, loc);
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
  // a = L L^T: solve L y = b, then L^T x = y (or U^T y = b, U x = y).
  const Array y = tri_solve(f, bm, true, lower, !lower, false, loc);
  return from_matrices(tri_solve(f, y, true, lower, lower, false, loc), vector, loc);
}

std::tuple<Array, Array, Array> lu(const Array& a, Loc loc) {
  const auto [lu_, pivots] = lu_factor(a, loc);
  const Array perm =
      bind1(Op::lu_pivots_to_permutation, {pivots}, {{"permutation_size", lu_.shape()[lu_.shape().size() - 2]}}, loc);
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

std::pair<Array, Array> slogdet(const Array& a, Loc loc) {
  const Array f = square_float("linalg::slogdet", a, loc);
  const int64_t n = f.shape().back();
  if (n == 1 || n == 2) {  // closed forms, as JAX
    const Array det = n == 1 ? entry(f, 0, 0, loc)
                             : entry(f, 0, 0, loc) * entry(f, 1, 1, loc) - entry(f, 0, 1, loc) * entry(f, 1, 0, loc);
    return {sign(det), log(abs(det))};
  }
  const std::vector<Array> out = detail::bind(Op::lu, {f}, {}, loc);
  return slogdet_from_lu(out[0], out[1], loc);
}

Array det(const Array& a, Loc loc) {
  const Array f = square_float("linalg::det", a, loc);
  const int64_t n = f.shape().back();
  auto e = [&](int64_t i, int64_t j) { return entry(f, i, j, loc); };
  if (n == 2) return e(0, 0) * e(1, 1) - e(0, 1) * e(1, 0);
  if (n == 3)  // JAX's expansion, term for term
    return e(0, 0) * e(1, 1) * e(2, 2) + e(0, 1) * e(1, 2) * e(2, 0) + e(0, 2) * e(1, 0) * e(2, 1) -
           e(0, 2) * e(1, 1) * e(2, 0) - e(0, 0) * e(1, 2) * e(2, 1) - e(0, 1) * e(1, 0) * e(2, 2);
  const auto [s, logdet] = slogdet(f, loc);
  return s * exp(logdet);
}

}  // namespace graft::linalg
