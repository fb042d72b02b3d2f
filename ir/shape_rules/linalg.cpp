// Shape/dtype rules of the linear algebra ops: dot_general (XLA's: result
// axes are the batch axes, then lhs's free axes, then rhs's free axes) and the
// factorizations and solves over batches of matrices (the last two axes).
#include <algorithm>
#include <cstdint>
#include <utility>

#include "ir/dtype.h"
#include "ir/shape_rules/rule.h"

namespace graft::ir {

OutTypes dot_general_shape(const RuleCtx& c) {
  const ValueType& a = c.input(0);
  const ValueType& b = c.input(1);
  if (a.dtype != b.dtype)
    c.dtype_error(std::string("operand dtypes ") + dtype_name(a.dtype) + " and " + dtype_name(b.dtype) + " differ");
  if (a.dtype == DType::bool_) c.dtype_error("needs numeric operands, got bool");
  const Ints& lc = c.attr_ints("lhs_contracting");
  const Ints& rc = c.attr_ints("rhs_contracting");
  const Ints& lb = c.attr_ints("lhs_batch");
  const Ints& rb = c.attr_ints("rhs_batch");
  if (lc.size() != rc.size()) c.shape_error("lhs_contracting and rhs_contracting differ in length");
  if (lb.size() != rb.size()) c.shape_error("lhs_batch and rhs_batch differ in length");

  auto mark = [&](const Ints& axes, std::vector<bool>& used, int rank, const char* side) {
    for (int64_t ax : axes) {
      int i = c.axis(ax, rank, std::string(side) + " axis");
      if (used[i]) c.shape_error(std::string(side) + " axis " + std::to_string(ax) + " is used twice");
      used[i] = true;
    }
  };
  std::vector<bool> lused(a.rank(), false), rused(b.rank(), false);
  mark(lc, lused, a.rank(), "lhs");
  mark(lb, lused, a.rank(), "lhs");
  mark(rc, rused, b.rank(), "rhs");
  mark(rb, rused, b.rank(), "rhs");
  for (size_t i = 0; i < lc.size(); ++i)
    if (a.shape[lc[i]] != b.shape[rc[i]])
      c.shape_error("contracting sizes differ: lhs axis " + std::to_string(lc[i]) + " has " +
                    std::to_string(a.shape[lc[i]]) + ", rhs axis " + std::to_string(rc[i]) + " has " +
                    std::to_string(b.shape[rc[i]]));
  Shape out;
  for (size_t i = 0; i < lb.size(); ++i) {
    if (a.shape[lb[i]] != b.shape[rb[i]]) c.shape_error("batch sizes differ at batch dimension " + std::to_string(i));
    out.push_back(a.shape[lb[i]]);
  }
  for (int i = 0; i < a.rank(); ++i)
    if (!lused[i]) out.push_back(a.shape[i]);
  for (int i = 0; i < b.rank(); ++i)
    if (!rused[i]) out.push_back(b.shape[i]);
  c.check_shape(out, "result");
  return {ValueType{a.dtype, out}};
}

}  // namespace graft::ir

namespace graft::ir {

namespace {

// The size n of a's trailing n x n matrices (rank >= 2); a ShapeError otherwise.
int64_t square_size(const RuleCtx& c, const ValueType& a, const char* what) {
  if (a.rank() < 2)
    c.shape_error(std::string(what) + " must have rank >= 2 (batches of matrices), got rank " +
                  std::to_string(a.rank()));
  const int64_t n = a.shape[a.rank() - 1];
  if (a.shape[a.rank() - 2] != n)
    c.shape_error(std::string(what) + " must be square in its last two axes, got " +
                  std::to_string(a.shape[a.rank() - 2]) + "x" + std::to_string(n));
  return n;
}

// A DTypeError unless dtype is one LAPACK computes in (f32, f64, c64, c128;
// JAX refuses the halves too).
void check_lapack_dtype(const RuleCtx& c, DType dtype) {
  if (!accepts_dtype(DTypeClass::lapack, dtype))
    c.dtype_error(std::string("needs f32, f64, c64 or c128 (the types LAPACK computes in), got ") + dtype_name(dtype));
}

// (m, n) of a's trailing m x n matrices, a batch of them in a LAPACK dtype;
// a DTypeError or ShapeError otherwise.
std::pair<int64_t, int64_t> float_matrices(const RuleCtx& c, const ValueType& a) {
  check_lapack_dtype(c, a.dtype);
  if (a.rank() < 2)
    c.shape_error("the operand must have rank >= 2 (batches of matrices), got rank " + std::to_string(a.rank()));
  return {a.shape[a.rank() - 2], a.shape[a.rank() - 1]};
}

}  // namespace

// cholesky: [..., n, n] -> the same (the lower factor; the input's lower triangle is read).
OutTypes cholesky_shape(const RuleCtx& c) {
  const ValueType& a = c.input(0);
  check_lapack_dtype(c, a.dtype);
  square_size(c, a, "the operand");
  return {a};
}

// triangular_solve(a, b): a [..., m, m]; b [..., m, n] (left_side: op(a) x = b)
// or [..., n, m] (x op(a) = b); the same batch axes and dtype. x has b's type.
OutTypes triangular_solve_shape(const RuleCtx& c) {
  const ValueType& a = c.input(0);
  const ValueType& b = c.input(1);
  if (a.dtype != b.dtype)
    c.dtype_error(std::string("operand dtypes ") + dtype_name(a.dtype) + " and " + dtype_name(b.dtype) + " differ");
  check_lapack_dtype(c, a.dtype);
  c.attr_bool("conjugate_a");
  const int64_t m = square_size(c, a, "a");
  if (b.rank() != a.rank())
    c.shape_error("b must have a's rank " + std::to_string(a.rank()) + ", got rank " + std::to_string(b.rank()));
  for (int i = 0; i + 2 < a.rank(); ++i)
    if (a.shape[i] != b.shape[i])
      c.shape_error("batch axis " + std::to_string(i) + " differs: a has " + std::to_string(a.shape[i]) + ", b has " +
                    std::to_string(b.shape[i]));
  const bool left = c.attr_int("left_side") != 0;
  const int64_t along = b.shape[left ? b.rank() - 2 : b.rank() - 1];
  if (along != m)
    c.shape_error(std::string(left ? "left_side: b's rows" : "right side: b's columns") + " (" + std::to_string(along) +
                  ") must equal a's size " + std::to_string(m));
  return {b};
}

}  // namespace graft::ir

namespace graft::ir {

// lu: [..., m, n] -> (lu [..., m, n], pivots i32 [..., min(m, n)],
// permutation i32 [..., m]), as jax.lax.linalg.lu.
OutTypes lu_shape(const RuleCtx& c) {
  const ValueType& a = c.input(0);
  const auto [m, n] = float_matrices(c, a);
  if (m > INT32_MAX) c.shape_error(std::to_string(m) + " rows do not fit the i32 pivots");
  Shape pivots(a.shape.begin(), a.shape.end() - 1), permutation = pivots;
  pivots.back() = std::min(m, n);
  return OutTypes(std::vector<ValueType>{a, {DType::i32, pivots}, {DType::i32, permutation}});
}

// lu_pivots_to_permutation: i32 pivots [..., k] (row i was swapped with row
// pivots[i], in order) -> i32 [..., permutation_size], as JAX's.
OutTypes lu_pivots_to_permutation_shape(const RuleCtx& c) {
  const ValueType& p = c.input(0);
  if (p.dtype != DType::i32) c.dtype_error(std::string("needs i32 pivots, got ") + dtype_name(p.dtype));
  if (p.rank() < 1) c.shape_error("the pivots must have rank >= 1, got a scalar");
  const int64_t size = c.attr_int("permutation_size");
  if (size < p.shape.back() || size > INT32_MAX)
    c.shape_error("permutation_size " + std::to_string(size) + " must be at least the " +
                  std::to_string(p.shape.back()) + " pivots and fit i32");
  Shape out = p.shape;
  out.back() = size;
  return {ValueType{DType::i32, out}};
}

// eigh: [..., n, n] -> (v [..., n, n], the eigenvectors in its columns;
// w [..., n], the eigenvalues ascending, real), from a's `lower` (or upper)
// triangle (Hermitian for a complex a).
OutTypes eigh_shape(const RuleCtx& c) {
  const ValueType& a = c.input(0);
  check_lapack_dtype(c, a.dtype);
  const int64_t n = square_size(c, a, "the operand");
  c.attr_bool("lower");
  Shape w(a.shape.begin(), a.shape.end() - 1);
  w.back() = n;
  return OutTypes(std::vector<ValueType>{a, {real_dtype(a.dtype), w}});
}

// qr: [..., m, n] -> (q, r) with k = min(m, n): q [..., m, k] and r
// [..., k, n], or with full_matrices q [..., m, m] and r [..., m, n].
OutTypes qr_shape(const RuleCtx& c) {
  const ValueType& a = c.input(0);
  const auto [m, n] = float_matrices(c, a);
  const int64_t k = c.attr_bool("full_matrices") ? m : std::min(m, n);
  Shape q = a.shape, r = a.shape;
  q.back() = k;
  r[r.size() - 2] = k;
  return OutTypes(std::vector<ValueType>{{a.dtype, q}, {a.dtype, r}});
}

// svd: [..., m, n] -> (s [..., k], k = min(m, n), descending) and with
// compute_uv (u [..., m, k], vt [..., k, n]), or with full_matrices
// (u [..., m, m], vt [..., n, n]), as jax.lax.linalg.svd: a = u diag(s) vt;
// s is real for a complex a.
OutTypes svd_shape(const RuleCtx& c) {
  const ValueType& a = c.input(0);
  const auto [m, n] = float_matrices(c, a);
  const int64_t k = std::min(m, n);
  const bool full = c.attr_bool("full_matrices");
  Shape s(a.shape.begin(), a.shape.end() - 1), u = a.shape, vt = a.shape;
  s.back() = k;
  if (!c.attr_bool("compute_uv")) return {ValueType{real_dtype(a.dtype), s}};
  u.back() = full ? m : k;
  vt[vt.size() - 2] = full ? n : k;
  return OutTypes(std::vector<ValueType>{{real_dtype(a.dtype), s}, {a.dtype, u}, {a.dtype, vt}});
}

// eig: [..., n, n] -> (w [..., n], then vl and vr [..., n, n] where asked
// for), all complex (c64 for f32 and c64, c128 for f64 and c128), as
// jax.lax.linalg.eig.
OutTypes eig_shape(const RuleCtx& c) {
  const ValueType& a = c.input(0);
  check_lapack_dtype(c, a.dtype);
  const int64_t n = square_size(c, a, "the operand");
  const DType complex = a.dtype == DType::f32 || a.dtype == DType::c64 ? DType::c64 : DType::c128;
  Shape w(a.shape.begin(), a.shape.end() - 1);
  w.back() = n;
  std::vector<ValueType> out{{complex, w}};
  if (c.attr_bool("compute_left_eigenvectors")) out.push_back({complex, a.shape});
  if (c.attr_bool("compute_right_eigenvectors")) out.push_back({complex, a.shape});
  return OutTypes(out);
}

}  // namespace graft::ir

namespace graft::ir {

// geqrf: [..., m, n] -> (the packed factorization [..., m, n], taus
// [..., min(m, n)]), as jax.lax.linalg.geqrf.
OutTypes geqrf_shape(const RuleCtx& c) {
  const ValueType& a = c.input(0);
  const auto [m, n] = float_matrices(c, a);
  Shape taus(a.shape.begin(), a.shape.end() - 1);
  taus.back() = std::min(m, n);
  return OutTypes(std::vector<ValueType>{a, {a.dtype, taus}});
}

// householder_product(a [..., m, n], taus [..., k]) -> [..., m, n], with
// m >= n >= k and the same batch axes and dtype, as jax.lax.linalg's.
OutTypes householder_product_shape(const RuleCtx& c) {
  const ValueType& a = c.input(0);
  const ValueType& taus = c.input(1);
  const auto [m, n] = float_matrices(c, a);
  if (taus.dtype != a.dtype)
    c.dtype_error(std::string("taus' dtype ") + dtype_name(taus.dtype) + " differs from a's " + dtype_name(a.dtype));
  if (m < n) c.shape_error("a must have at least as many rows as columns, got " + type_str(a));
  if (taus.rank() != a.rank() - 1 || !std::equal(taus.shape.begin(), taus.shape.end() - 1, a.shape.begin()))
    c.shape_error("taus must be [..., k] over a's batch axes, got " + type_str(taus) + " for " + type_str(a));
  if (taus.shape.back() > n)
    c.shape_error("more taus (" + std::to_string(taus.shape.back()) + ") than a's columns (" + std::to_string(n) + ")");
  return {a};
}

}  // namespace graft::ir
