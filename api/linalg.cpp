// graft::linalg (include/graft/linalg.h): lowering to the cholesky and
// triangular_solve primitives, as jnp.linalg and jax.scipy.linalg do.
#include "graft/linalg.h"

#include <string>
#include <vector>

#include "api/dispatch.h"
#include "api/lowering.h"
#include "graft/errors.h"
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

Array solve(const Array& a, const Array& b, bool left, bool lower, bool transpose, bool unit, const Loc& loc) {
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

Array from_matrices(const Array& x, bool vector, const Loc& loc) {
  if (!vector) return x;
  const Shape& s = x.shape();
  return bind1(Op::reshape, {x}, {{"new_sizes", ir::Ints(s.begin(), s.end() - 1)}}, loc);
}

}  // namespace

Array cholesky(const Array& a, Loc loc) {
  const Array f = square_float("linalg::cholesky", a, loc);
  const Array sum = bind1(Op::add, {f, swap_last(f, loc)}, {}, loc);
  const Array sym = bind1(Op::mul, {sum, full_like(sum, 0.5)}, {}, loc);
  return bind1(Op::cholesky, {sym}, {}, loc);
}

Array solve_triangular(const Array& a, const Array& b, bool lower, int trans, bool unit_diagonal, Loc loc) {
  const char* fn = "linalg::solve_triangular";
  if (trans < 0 || trans > 2)
    throw Error(std::string(fn) + ": trans must be 0 (a x = b), 1 (a^T x = b) or 2 (a^H x = b), got " +
                std::to_string(trans) + detail::where(loc));
  Array f = square_float(fn, a, loc);
  auto [bm, vector] = as_matrices(fn, f, b, loc);
  f = detail::convert(f, bm.dtype(), loc);
  return from_matrices(solve(f, bm, true, lower, trans != 0, unit_diagonal, loc), vector, loc);
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
  const Array y = solve(f, bm, true, lower, !lower, false, loc);
  return from_matrices(solve(f, y, true, lower, lower, false, loc), vector, loc);
}

}  // namespace graft::linalg
