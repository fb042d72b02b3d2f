// The linalg op family: each op's shape/dtype rule, JVP, transpose and
// batching rule side by side, op by op in ops.def order (the rules an op
// takes from ops.def's standard columns are not repeated here).
//
// Shape/dtype rules of the linear algebra ops: dot_general (XLA's: result
// axes are the batch axes, then lhs's free axes, then rhs's free axes) and the
// factorizations and solves over batches of matrices (the last two axes).
//
// Transform rules of dot_general (JVP: bilinear, d(a.b) = da.b + a.db),
// cholesky, triangular_solve, lu, eigh, eig, qr and svd (JAX's rules,
// jax/_src/lax/linalg.py), for real and complex matrices (where JAX writes
// _H, the conjugate transpose, so does each rule here: `adjoint`).
#include <algorithm>
#include <cstdint>
#include <utility>

#include "graft/errors.h"
#include "ir/attr_access.h"
#include "ir/dtype.h"
#include "ops/rules.h"

namespace graft::ops {

namespace {

// Attributes of a batched matrix product x @ y over [..., m, k] x [..., k, n].
ir::Attrs matmul_attrs(int rank) {
  ir::Ints batch;
  for (int64_t i = 0; i + 2 < rank; ++i) batch.push_back(i);
  return {{"lhs_contracting", ir::Ints{rank - 1}},
          {"rhs_contracting", ir::Ints{rank - 2}},
          {"lhs_batch", batch},
          {"rhs_batch", batch}};
}

// x with its last two axes swapped.
ValueId swap_last(JvpCtx& c, ValueId x) {
  const int rank = c.type(x).rank();
  ir::Ints perm;
  for (int64_t i = 0; i < rank; ++i) perm.push_back(i);
  std::swap(perm[rank - 1], perm[rank - 2]);
  return c.add(Op::transpose, {x}, {{"permutation", perm}});
}

// x's conjugate transpose over its last two axes (its transpose when real).
ValueId adjoint(JvpCtx& c, ValueId x) {
  const ValueId t = swap_last(c, x);
  return ir::is_complex(c.type(x).dtype) ? c.add(Op::conj, {t}) : t;
}

// x in `dtype` (x itself when it has it).
ValueId to_dtype(JvpCtx& c, ValueId x, DType dtype) {
  return c.type(x).dtype == dtype ? x : c.add(Op::convert_element_type, {x}, {{"new_dtype", dtype}});
}

// The real part of x (x itself when real).
ValueId real_part(JvpCtx& c, ValueId x) { return ir::is_complex(c.type(x).dtype) ? c.add(Op::real, {x}) : x; }

// A triangular_solve node's attributes.
ir::Attrs solve_attrs(bool left, bool lower, bool transpose, bool conjugate, bool unit) {
  return {{"conjugate_a", int64_t{conjugate}},
          {"left_side", int64_t{left}},
          {"lower", int64_t{lower}},
          {"transpose_a", int64_t{transpose}},
          {"unit_diagonal", int64_t{unit}}};
}

// Row and column indices of like's trailing matrices, compared by `cmp`,
// as a float mask of like's type (1 where the comparison holds).
ValueId index_mask(JvpCtx& c, ValueId like, Op cmp) {
  const ir::ValueType t = c.type(like);
  const int rank = t.rank();
  const ir::Ints shape(t.shape.begin(), t.shape.end());
  auto index = [&](int64_t dim) {
    return c.add(Op::iota, {}, {{"dtype", DType::i32}, {"shape", shape}, {"dimension", dim}});
  };
  const ValueId holds = c.add(cmp, {index(rank - 2), index(rank - 1)});
  return c.add(Op::convert_element_type, {holds}, {{"new_dtype", t.dtype}});
}

// The symmetric (Hermitian) matrix that x's lower (or upper) triangle stands
// for: the triangle with the diagonal, plus the strict triangle's adjoint.
ValueId symmetric_from_triangle(JvpCtx& c, ValueId x, bool lower) {
  const ValueId with_diagonal = index_mask(c, x, lower ? Op::ge : Op::le);
  const ValueId strict = index_mask(c, x, lower ? Op::gt : Op::lt);
  return c.add(Op::add, {c.add(Op::mul, {x, with_diagonal}), adjoint(c, c.add(Op::mul, {x, strict}))});
}

// The top-left rows x cols block of x's trailing matrices.
ValueId leading_block(JvpCtx& c, ValueId x, int64_t rows, int64_t cols) {
  const ir::ValueType t = c.type(x);
  const int rank = t.rank();
  if (t.shape[rank - 2] == rows && t.shape[rank - 1] == cols) return x;
  ir::Ints start(static_cast<size_t>(rank), 0), limit(t.shape.begin(), t.shape.end()),
      strides(static_cast<size_t>(rank), 1);
  limit[rank - 2] = rows;
  limit[rank - 1] = cols;
  return c.add(Op::slice, {x}, {{"start_indices", start}, {"limit_indices", limit}, {"strides", strides}});
}

// x padded with zeros after its last rows (axis -2) or columns (axis -1).
ValueId pad_after(JvpCtx& c, ValueId x, int axis_from_end, int64_t count) {
  if (count == 0) return x;
  const int rank = c.type(x).rank();
  ir::Ints low(static_cast<size_t>(rank), 0), high = low, interior = low;
  high[rank - axis_from_end] = count;
  const ValueId zero = emit_full(c.builder(), 0.0, ir::ValueType{c.type(x).dtype, {}}, &c.node());
  return c.add(Op::pad, {x, zero}, {{"padding_low", low}, {"padding_high", high}, {"padding_interior", interior}});
}

ir::Ints free_axes(int rank, const ir::Ints& a, const ir::Ints& b) {
  ir::Ints f;
  for (int64_t i = 0; i < rank; ++i)
    if (std::find(a.begin(), a.end(), i) == a.end() && std::find(b.begin(), b.end(), i) == b.end()) f.push_back(i);
  return f;
}

// Positions, in order, of `which` among the entries of `order`.
ir::Ints argsort(const ir::Ints& keys) {
  ir::Ints idx(keys.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<int64_t>(i);
  std::sort(idx.begin(), idx.end(), [&](int64_t p, int64_t q) { return keys[p] < keys[q]; });
  return idx;
}

// The cotangent of one operand (`mine`) given the other (`other`), written
// for the lhs; the rhs case swaps roles. ct has axes [batch, lhs free, rhs free].
// Contracting ct's other-free axes with other's free axes (batch with batch)
// gives [batch, my free, my contracting (in other's contracting order)];
// a transpose puts those back in my axis order.
ValueId operand_cotangent(TransposeCtx& c, ValueId ct, ValueId other, const ir::ValueType& mine_t,
                          const ir::ValueType& other_t, const ir::Ints& my_c, const ir::Ints& other_c,
                          const ir::Ints& my_b, const ir::Ints& other_b, bool mine_is_lhs) {
  ir::Ints my_free = free_axes(mine_t.rank(), my_c, my_b);
  ir::Ints other_free = free_axes(other_t.rank(), other_c, other_b);
  int64_t nb = static_cast<int64_t>(my_b.size());
  int64_t n_my_free = static_cast<int64_t>(my_free.size());
  // ct axes: batch [0, nb), lhs free, rhs free.
  ir::Ints ct_other_free, ct_batch;
  int64_t other_free_start = mine_is_lhs ? nb + n_my_free : nb;
  for (size_t i = 0; i < other_free.size(); ++i) ct_other_free.push_back(other_free_start + static_cast<int64_t>(i));
  for (int64_t i = 0; i < nb; ++i) ct_batch.push_back(i);
  // dot_general(ct, other) gives [batch, my free, my contracting (in the
  // order of other's contracting axes, ascending)]; dot_general(other, ct)
  // gives [batch, my contracting, my free]. Take the order that needs no
  // transpose when there is one (a weight's gradient usually does).
  ir::Ints my_c_in_order;
  for (int64_t j : argsort(other_c)) my_c_in_order.push_back(my_c[j]);
  auto permutation = [&](bool free_first) {
    ir::Ints result_axes(my_b.begin(), my_b.end());
    const ir::Ints& first = free_first ? my_free : my_c_in_order;
    const ir::Ints& second = free_first ? my_c_in_order : my_free;
    result_axes.insert(result_axes.end(), first.begin(), first.end());
    result_axes.insert(result_axes.end(), second.begin(), second.end());
    ir::Ints perm(result_axes.size());
    for (size_t pos = 0; pos < result_axes.size(); ++pos) perm[result_axes[pos]] = static_cast<int64_t>(pos);
    return perm;
  };
  auto is_identity = [](const ir::Ints& perm) {
    for (size_t i = 0; i < perm.size(); ++i)
      if (perm[i] != static_cast<int64_t>(i)) return false;
    return true;
  };
  const ir::Ints free_first = permutation(true);
  if (!is_identity(free_first) && is_identity(permutation(false)))
    return c.add(Op::dot_general, {other, ct},
                 {{"lhs_contracting", other_free},
                  {"rhs_contracting", ct_other_free},
                  {"lhs_batch", other_b},
                  {"rhs_batch", ct_batch}});
  ValueId r = c.add(Op::dot_general, {ct, other},
                    {{"lhs_contracting", ct_other_free},
                     {"rhs_contracting", other_free},
                     {"lhs_batch", ct_batch},
                     {"rhs_batch", other_b}});
  return is_identity(free_first) ? r : c.add(Op::transpose, {r}, {{"permutation", free_first}});
}

}  // namespace

// ---- dot_general

OutTypes dot_general_shape(const RuleCtx& c) {
  const ValueType& a = c.input(0);
  const ValueType& b = c.input(1);
  c.check_same_dtype(a, b);
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

ir::IdList dot_general_jvp(JvpCtx& c) {
  ValueId a = c.tangents[0] == kZero ? kZero : c.add(Op::dot_general, {c.tangents[0], c.primals[1]}, c.attrs());
  ValueId b = c.tangents[1] == kZero ? kZero : c.add(Op::dot_general, {c.primals[0], c.tangents[1]}, c.attrs());
  return {c.tadd(a, b)};
}

ir::IdList dot_general_transpose(TransposeCtx& c) {
  ValueId ct = c.cotangents[0];
  if (c.unknown[0] && c.unknown[1]) throw UnsupportedError("transpose: dot_general of two tangents is not linear");
  if (ct == kZero) return {kZero, kZero};
  const ir::Ints& lc = ir::attr<ir::Ints>(c.node(), "lhs_contracting");
  const ir::Ints& rc = ir::attr<ir::Ints>(c.node(), "rhs_contracting");
  const ir::Ints& lb = ir::attr<ir::Ints>(c.node(), "lhs_batch");
  const ir::Ints& rb = ir::attr<ir::Ints>(c.node(), "rhs_batch");
  const ir::ValueType a = c.operand_types[0], b = c.operand_types[1];
  if (c.unknown[0]) return {operand_cotangent(c, ct, c.operands[1], a, b, lc, rc, lb, rb, true), kZero};
  return {kZero, operand_cotangent(c, ct, c.operands[0], b, a, rc, lc, rb, lb, false)};
}

// dot_general carries the batch axis natively. Both operands batched: it
// becomes the first batch dimension, so a vmapped matmul is one batched
// GEMM. One operand batched: it becomes a free axis of that operand, so the
// product stays one GEMM with a larger M (or N).
std::vector<BatchedValue> dot_general_batch(BatchCtx& c) {
  const int64_t dl = c.operands[0].dim, dr = c.operands[1].dim;
  auto shifted = [](ir::Ints axes, int64_t dim) {
    if (dim != kNotBatched)
      for (int64_t& a : axes) a = a >= dim ? a + 1 : a;
    return axes;
  };
  auto get = [&](const char* name) { return ir::ints_attr(c.node(), name); };
  ir::Ints lc = shifted(get("lhs_contracting"), dl), rc = shifted(get("rhs_contracting"), dr);
  ir::Ints lb = shifted(get("lhs_batch"), dl), rb = shifted(get("rhs_batch"), dr);
  const int64_t lrank = c.type(c.operands[0].value).rank();
  // Where a free axis lands among its operand's free axes (in axis order).
  auto free_position = [](int64_t axis, const ir::Ints& contracting, const ir::Ints& batch) {
    int64_t pos = 0;
    for (int64_t d = 0; d < axis; ++d)
      if (std::find(contracting.begin(), contracting.end(), d) == contracting.end() &&
          std::find(batch.begin(), batch.end(), d) == batch.end())
        ++pos;
    return pos;
  };
  int64_t out_dim;
  if (dl != kNotBatched && dr != kNotBatched) {
    lb.insert(lb.begin(), dl);
    rb.insert(rb.begin(), dr);
    out_dim = 0;
  } else if (dl != kNotBatched) {
    out_dim = static_cast<int64_t>(lb.size()) + free_position(dl, lc, lb);
  } else {
    const int64_t lfree = lrank - static_cast<int64_t>(lc.size() + lb.size());
    out_dim = static_cast<int64_t>(lb.size()) + lfree + free_position(dr, rc, rb);
  }
  ValueId out = c.add(Op::dot_general, {c.operands[0].value, c.operands[1].value},
                      {{"lhs_contracting", lc}, {"rhs_contracting", rc}, {"lhs_batch", lb}, {"rhs_batch", rb}});
  return {{out, out_dim}};
}

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

// ---- cholesky

// cholesky: [..., n, n] -> the same (the lower factor; the input's lower triangle is read).
OutTypes cholesky_shape(const RuleCtx& c) {
  const ValueType& a = c.input(0);
  check_lapack_dtype(c, a.dtype);
  square_size(c, a, "the operand");
  return {a};
}

// L' = L phi(L^-1 A' L^-H), phi taking the lower triangle with the diagonal
// halved (Murray, arXiv:1602.07527; JAX's rule). The op reads A's lower
// triangle, so A' is first made the symmetric matrix of its lower triangle:
// for a symmetric A' (what linalg::cholesky's symmetrized input passes) that
// changes nothing and the rule is JAX's; for any other it is still the op's
// exact derivative. Linear in A' (masks, a transpose, two triangular solves,
// a product), so reverse mode transposes it.
ir::IdList cholesky_jvp(JvpCtx& c) {
  if (c.tangents[0] == kZero) return {kZero};
  const ValueId l = c.outputs[0];
  const ValueId t = symmetric_from_triangle(c, c.tangents[0], true);
  const int rank = c.type(l).rank();
  const bool complex = ir::is_complex(c.type(l).dtype);
  auto solve = [&](ValueId b, bool left, bool transpose) {
    return c.add(Op::triangular_solve, {l, b}, solve_attrs(left, true, transpose, transpose && complex, false));
  };
  const ValueId inner = solve(solve(t, false, true), true, false);  // L^-1 A' L^-H
  const ValueId below = index_mask(c, l, Op::gt), diagonal = index_mask(c, l, Op::eq);
  const ValueId phi_mask = c.add(Op::add, {below, c.add(Op::mul, {diagonal, c.scalar_like(0.5, diagonal)})});
  const ValueId phi = c.add(Op::mul, {inner, phi_mask});
  return {c.add(Op::dot_general, {l, phi}, matmul_attrs(rank))};
}

// cholesky, triangular_solve, lu, eigh, qr, svd and lu_pivots_to_permutation take leading batch axes natively: the
// vmapped axis goes first (an unbatched operand is broadcast along it).
std::vector<BatchedValue> cholesky_batch(BatchCtx& c) { return {{c.add(Op::cholesky, {c.at(0, 0)}), 0}}; }

// ---- triangular_solve

// triangular_solve(a, b): a [..., m, m]; b [..., m, n] (left_side: op(a) x = b)
// or [..., n, m] (x op(a) = b); the same batch axes and dtype. x has b's type.
OutTypes triangular_solve_shape(const RuleCtx& c) {
  const ValueType& a = c.input(0);
  const ValueType& b = c.input(1);
  c.check_same_dtype(a, b);
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

// x = op(a)^-1 b (or b op(a)^-1): linear in b; in a, x' = -op(a)^-1 op(a') x
// (or -x op(a') op(a)^-1) with a' masked to the triangle the op reads.
ir::IdList triangular_solve_jvp(JvpCtx& c) {
  const ValueId a = c.primals[0], x = c.outputs[0];
  const ValueId from_b = c.tangents[1] == kZero ? kZero : c.linear({1});
  if (c.tangents[0] == kZero) return {from_b};
  const ir::Attrs& attrs = c.attrs();
  const bool left = ir::int_attr(c.node(), "left_side") != 0, lower = ir::int_attr(c.node(), "lower") != 0;
  const bool transpose = ir::int_attr(c.node(), "transpose_a") != 0;
  const bool unit = ir::int_attr(c.node(), "unit_diagonal") != 0;
  const bool conjugate = ir::int_attr(c.node(), "conjugate_a") != 0;
  const Op keep = lower ? (unit ? Op::gt : Op::ge) : (unit ? Op::lt : Op::le);
  ValueId g = c.add(Op::mul, {c.tangents[0], index_mask(c, c.tangents[0], keep)});
  g = c.add(Op::neg, {g});
  if (transpose) g = swap_last(c, g);
  if (conjugate) g = c.add(Op::conj, {g});
  const int rank = c.type(x).rank();
  const ValueId product =
      left ? c.add(Op::dot_general, {g, x}, matmul_attrs(rank)) : c.add(Op::dot_general, {x, g}, matmul_attrs(rank));
  const ValueId from_a = c.add(Op::triangular_solve, {a, product}, attrs);
  return {c.tadd(from_a, from_b)};
}

// The transpose of b -> op(a)^-1 b is c -> op(a)^-T c: the same solve with
// transpose_a flipped (on either side). Not linear in a.
ir::IdList triangular_solve_transpose(TransposeCtx& c) {
  if (c.unknown[0]) throw UnsupportedError("transpose: triangular_solve is linear in b only, not in the matrix a");
  const ValueId ct = c.cotangents[0];
  if (ct == kZero) return {kZero, kZero};
  ir::Attrs attrs = c.attrs();
  attrs.set("transpose_a", int64_t{ir::int_attr(c.node(), "transpose_a") == 0});
  return {kZero, c.add(Op::triangular_solve, {c.operands[0], ct}, attrs)};
}

std::vector<BatchedValue> triangular_solve_batch(BatchCtx& c) {
  return {{c.add(Op::triangular_solve, {c.at(0, 0), c.at(1, 0)}, c.attrs()), 0}};
}

// ---- lu

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

// JAX's rule (jax/_src/lax/linalg.py, _lu_jvp_rule): with P A = L U, L unit
// lower m x m and U upper n x n (both padded with the identity where
// k = min(m, n) falls short), X = L^-1 P A' U^-1 and
// LU' = L tril(X, -1) + triu(X) U. Linear in A' (a row gather, masks, pads,
// two triangular solves, two products), so reverse mode transposes it.
ir::IdList lu_jvp(JvpCtx& c) {
  if (c.tangents[0] == kZero) return {kZero, kZero, kZero};
  const ValueId lu = c.outputs[0], perm = c.outputs[2];
  const ir::ValueType t = c.type(lu);
  const int rank = t.rank();
  const int64_t m = t.shape[rank - 2], n = t.shape[rank - 1], k = std::min(m, n);
  const ValueId x =
      c.add(Op::gather, {c.tangents[0], perm}, {{"axis", int64_t{rank - 2}}, {"batch_dims", int64_t{rank - 2}}});
  ValueId l = leading_block(c, lu, m, k);
  l = pad_after(c, c.add(Op::mul, {l, index_mask(c, l, Op::gt)}), 1, m - k);
  l = c.add(Op::add, {l, index_mask(c, l, Op::eq)});
  ValueId u = leading_block(c, lu, k, n);
  u = pad_after(c, c.add(Op::mul, {u, index_mask(c, u, Op::le)}), 2, n - k);
  if (n > k) {  // ones on the diagonal of the padded rows
    const ir::ValueType ut = c.type(u);
    const ir::Ints shape(ut.shape.begin(), ut.shape.end());
    const ValueId row =
        c.add(Op::iota, {}, {{"dtype", DType::i32}, {"shape", shape}, {"dimension", int64_t{rank - 2}}});
    const ValueId padded = c.add(Op::convert_element_type, {c.add(Op::ge, {row, c.scalar_like(double(k), row)})},
                                 {{"new_dtype", ut.dtype}});
    u = c.add(Op::add, {u, c.add(Op::mul, {index_mask(c, u, Op::eq), padded})});
  }
  auto solve = [&](ValueId a, ValueId b, bool left, bool lower, bool unit) {
    return c.add(Op::triangular_solve, {a, b}, solve_attrs(left, lower, false, false, unit));
  };
  const ValueId lau = solve(u, solve(l, x, true, true, true), false, false, false);
  const ValueId l_dot =
      c.add(Op::dot_general, {l, c.add(Op::mul, {lau, index_mask(c, lau, Op::gt)})}, matmul_attrs(rank));
  const ValueId u_dot =
      c.add(Op::dot_general, {c.add(Op::mul, {lau, index_mask(c, lau, Op::le)}), u}, matmul_attrs(rank));
  return {c.add(Op::add, {l_dot, u_dot}), kZero, kZero};
}

std::vector<BatchedValue> lu_batch(BatchCtx& c) {
  const std::vector<ValueId> outs = c.add_multi(Op::lu, {c.at(0, 0)});
  return {{outs[0], 0}, {outs[1], 0}, {outs[2], 0}};
}

// ---- lu_pivots_to_permutation

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

std::vector<BatchedValue> lu_pivots_to_permutation_batch(BatchCtx& c) {
  return {{c.add(Op::lu_pivots_to_permutation, {c.at(0, 0)}, c.attrs()), 0}};
}

// ---- eigh

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

// JAX's rule (_eigh_jvp_rule; Giles, "An extended collection of matrix
// derivative results", 2008): with A = V diag(w) V^H and S = V^H A' V,
// w' = re(diag(S)) and V' = V (F * S), F[i][j] = 1 / (w[j] - w[i]) off the
// diagonal and 0 on it. Where eigenvalues repeat F is infinite, so V' has
// infs and NaNs there, as JAX's; w' stays right. A' is first made the
// symmetric matrix of the triangle the op reads (JAX's rule for the
// symmetric tangents linalg::eigh passes). Linear in A'.
ir::IdList eigh_jvp(JvpCtx& c) {
  if (c.tangents[0] == kZero) return {kZero, kZero};
  const ValueId v = c.outputs[0], w = to_dtype(c, c.outputs[1], c.type(c.outputs[0]).dtype);
  const ir::ValueType vt = c.type(v);
  const int rank = vt.rank();
  const ValueId t = symmetric_from_triangle(c, c.tangents[0], ir::int_attr(c.node(), "lower") != 0);
  ir::Ints batch;
  for (int64_t i = 0; i + 2 < rank; ++i) batch.push_back(i);
  auto spread = [&](int64_t axis) {  // w along rows (axis rank-1: w[j]) or columns (rank-2: w[i])
    ir::Ints dims = batch;
    dims.push_back(axis);
    return c.add(Op::broadcast_in_dim, {w},
                 {{"shape", ir::Ints(vt.shape.begin(), vt.shape.end())}, {"broadcast_dimensions", dims}});
  };
  const ValueId eye = index_mask(c, v, Op::eq);
  const ValueId gap = c.add(Op::sub, {c.add(Op::add, {eye, spread(rank - 1)}), spread(rank - 2)});
  const ValueId f = c.add(Op::sub, {c.add(Op::reciprocal, {gap}), eye});
  const ValueId s =
      c.add(Op::dot_general, {c.add(Op::dot_general, {adjoint(c, v), t}, matmul_attrs(rank)), v}, matmul_attrs(rank));
  const ValueId dv = c.add(Op::dot_general, {v, c.add(Op::mul, {f, s})}, matmul_attrs(rank));
  const ValueId dw = real_part(c, c.add(Op::reduce_sum, {c.add(Op::mul, {s, eye})}, {{"axes", ir::Ints{rank - 1}}}));
  return {dv, dw};
}

std::vector<BatchedValue> eigh_batch(BatchCtx& c) {
  const std::vector<ValueId> outs = c.add_multi(Op::eigh, {c.at(0, 0)}, c.attrs());
  return {{outs[0], 0}, {outs[1], 0}};
}

// ---- qr

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

// JAX's rule (qr_jvp_rule; Townsend, "Differentiating the QR
// decomposition", 2018): with X = A' R^-1 and C = Q^H X, O = tril(C, -1) -
// tril(C, -1)^H (skew-Hermitian; for a complex A plus i im(diag(C)) on its
// diagonal), Q' = Q (O - C) + X and R' = (C - O) R.
// Defined, as in JAX, for m >= n and the reduced (or a square) factorization.
ir::IdList qr_jvp(JvpCtx& c) {
  if (c.tangents[0] == kZero) return {kZero, kZero};
  const ValueId q = c.outputs[0], r = c.outputs[1];
  const ir::ValueType at = c.type(c.primals[0]);
  const int rank = at.rank();
  const int64_t m = at.shape[rank - 2], n = at.shape[rank - 1];
  if (m < n || (ir::int_attr(c.node(), "full_matrices") != 0 && m != n))
    throw UnsupportedError(
        "jvp of qr: JAX defines none for a matrix with fewer rows than columns or the "
        "full_matrices factorization of a non-square one; got a " +
        ir::type_str(at) + (m < n ? " with fewer rows than columns" : " with full_matrices"));
  const ValueId x = c.add(Op::triangular_solve, {r, c.tangents[0]}, solve_attrs(false, false, false, false, false));
  const ValueId qt_x = c.add(Op::dot_general, {adjoint(c, q), x}, matmul_attrs(rank));
  const ValueId below = c.add(Op::mul, {qt_x, index_mask(c, qt_x, Op::gt)});
  ValueId skew = c.add(Op::sub, {below, adjoint(c, below)});
  if (ir::is_complex(at.dtype)) {  // i im(C) on the diagonal
    const ValueId imaginary = c.add(Op::sub, {qt_x, to_dtype(c, c.add(Op::real, {qt_x}), at.dtype)});
    skew = c.add(Op::add, {skew, c.add(Op::mul, {imaginary, index_mask(c, qt_x, Op::eq)})});
  }
  const ValueId dq = c.add(Op::add, {c.add(Op::dot_general, {q, c.add(Op::sub, {skew, qt_x})}, matmul_attrs(rank)), x});
  const ValueId dr = c.add(Op::dot_general, {c.add(Op::sub, {qt_x, skew}), r}, matmul_attrs(rank));
  return {dq, dr};
}

std::vector<BatchedValue> qr_batch(BatchCtx& c) {
  const std::vector<ValueId> outs = c.add_multi(Op::qr, {c.at(0, 0)}, c.attrs());
  return {{outs[0], 0}, {outs[1], 0}};
}

// ---- svd

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

// JAX's rule (_svd_jvp_rule): with dS = U^H A' V, s' = re(diag(dS));
// F[i][j] = 1 / (s_j^2 - s_i^2) off the diagonal, 0 on it;
// U' = U (F * (dS S + S dS^H) + (dS - dS^H) / 2 * S^-1) and
// V' = V (F * (S dS + dS^H S)), plus for m > n (n > m) the part of A' V
// (A'^H U) outside U's (V's) span, divided by s. Repeated singular values
// make F infinite, so U' and V' are infs and NaNs there, as JAX's. Defined,
// as JAX's, for the reduced (or a square) factorization.
ir::IdList svd_jvp(JvpCtx& c) {
  const bool uv = ir::int_attr(c.node(), "compute_uv") != 0;
  if (c.tangents[0] == kZero) return uv ? ir::IdList{kZero, kZero, kZero} : ir::IdList{kZero};
  const ir::ValueType at = c.type(c.primals[0]);
  const int rank = at.rank();
  const int64_t m = at.shape[rank - 2], n = at.shape[rank - 1];
  if (uv && ir::int_attr(c.node(), "full_matrices") != 0 && m != n)
    throw UnsupportedError("jvp of svd: JAX defines none for the full_matrices factorization of a non-square " +
                           ir::type_str(at) + "; use full_matrices = false");
  ir::IdList usv = c.outputs;
  if (!uv) usv = c.add_multi(Op::svd, {c.primals[0]}, {{"compute_uv", int64_t{1}}, {"full_matrices", int64_t{0}}});
  const ValueId s = usv[0], u = usv[1], vt = usv[2], da = c.tangents[0];
  const DType dtype = at.dtype;  // u's and vt's; s is real
  const ValueId ut = adjoint(c, u), v = adjoint(c, vt);
  auto mm = [&](ValueId x, ValueId y) { return c.add(Op::dot_general, {x, y}, matmul_attrs(rank)); };
  const ValueId ds_mat = mm(mm(ut, da), v);  // [..., k, k]
  const ValueId ds = real_part(c, c.add(Op::reduce_sum, {c.add(Op::mul, {ds_mat, index_mask(c, ds_mat, Op::eq)})},
                                        {{"axes", ir::Ints{rank - 1}}}));
  if (!uv) return {ds};
  ir::Ints batch;
  for (int64_t i = 0; i + 2 < rank; ++i) batch.push_back(i);
  // s along a matrix's columns (s[j], axis rank-1) or rows (s[i], rank-2), for rows x k matrices.
  auto spread = [&](int64_t rows, int64_t axis) {
    ir::Ints shape(at.shape.begin(), at.shape.end() - 2), dims = batch;
    shape.push_back(rows);
    shape.push_back(c.type(s).shape.back());
    dims.push_back(axis);
    return c.add(Op::broadcast_in_dim, {s}, {{"shape", shape}, {"broadcast_dimensions", dims}});
  };
  const int64_t k = c.type(s).shape.back();
  const ValueId s_j = spread(k, rank - 1), s_i = spread(k, rank - 2);
  const ValueId eye = index_mask(c, s_j, Op::eq);  // real, as s
  const ValueId diffs = c.add(Op::mul, {c.add(Op::add, {s_j, s_i}), c.add(Op::sub, {s_j, s_i})});
  const ValueId f = to_dtype(c, c.add(Op::sub, {c.add(Op::reciprocal, {c.add(Op::add, {diffs, eye})}), eye}), dtype);
  const ValueId dss = c.add(Op::mul, {to_dtype(c, s_j, dtype), ds_mat});
  const ValueId sds = c.add(Op::mul, {to_dtype(c, s_i, dtype), ds_mat});
  // 1 / s on the diagonal (0 where s is 0).
  const ValueId zero_s =
      c.add(Op::convert_element_type, {c.add(Op::eq, {s_j, c.zeros_like(s_j)})}, {{"new_dtype", c.type(s).dtype}});
  const ValueId s_inv = to_dtype(
      c, c.add(Op::mul, {c.add(Op::sub, {c.add(Op::reciprocal, {c.add(Op::add, {s_j, zero_s})}), zero_s}), eye}),
      dtype);
  const ValueId skew = c.add(
      Op::mul, {c.add(Op::mul, {c.add(Op::sub, {ds_mat, adjoint(c, ds_mat)}), s_inv}), c.scalar_like(0.5, ds_mat)});
  ValueId du = mm(u, c.add(Op::add, {c.add(Op::mul, {f, c.add(Op::add, {dss, adjoint(c, dss)})}), skew}));
  ValueId dv = mm(v, c.add(Op::mul, {f, c.add(Op::add, {sds, adjoint(c, sds)})}));
  if (m > n) {
    const ValueId dav = mm(da, v);
    const ValueId outside = c.add(Op::sub, {dav, mm(u, mm(ut, dav))});
    du = c.add(Op::add, {du, c.add(Op::div, {outside, to_dtype(c, spread(m, rank - 1), dtype)})});
  }
  if (n > m) {
    const ValueId dahu = mm(adjoint(c, da), u);
    const ValueId outside = c.add(Op::sub, {dahu, mm(v, mm(vt, dahu))});
    dv = c.add(Op::add, {dv, c.add(Op::div, {outside, to_dtype(c, spread(n, rank - 1), dtype)})});
  }
  return {ds, du, adjoint(c, dv)};
}

std::vector<BatchedValue> svd_batch(BatchCtx& c) {
  std::vector<BatchedValue> out;
  for (ValueId v : c.add_multi(Op::svd, {c.at(0, 0)}, c.attrs())) out.push_back({v, 0});
  return out;
}

// ---- geqrf

// geqrf: [..., m, n] -> (the packed factorization [..., m, n], taus
// [..., min(m, n)]), as jax.lax.linalg.geqrf.
OutTypes geqrf_shape(const RuleCtx& c) {
  const ValueType& a = c.input(0);
  const auto [m, n] = float_matrices(c, a);
  Shape taus(a.shape.begin(), a.shape.end() - 1);
  taus.back() = std::min(m, n);
  return OutTypes(std::vector<ValueType>{a, {a.dtype, taus}});
}

// geqrf and householder_product have no derivative in JAX (it raises), so
// differentiating one is an error here too, not a silent zero.
ir::IdList geqrf_jvp(JvpCtx&) {
  throw UnsupportedError("jvp of geqrf: JAX defines none; differentiate linalg::qr instead");
}

std::vector<BatchedValue> geqrf_batch(BatchCtx& c) {
  const std::vector<ValueId> outs = c.add_multi(Op::geqrf, {c.at(0, 0)});
  return {{outs[0], 0}, {outs[1], 0}};
}

// ---- householder_product

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

ir::IdList householder_product_jvp(JvpCtx&) {
  throw UnsupportedError("jvp of householder_product: JAX defines none; differentiate linalg::qr instead");
}

std::vector<BatchedValue> householder_product_batch(BatchCtx& c) {
  return {{c.add(Op::householder_product, {c.at(0, 0), c.at(1, 0)}), 0}};
}

// ---- eig

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

// JAX's rule (eig_jvp_rule) for the eigenvalues alone: with A V = V diag(w),
// w' = diag(V^-1 A' V) (the right eigenvectors recomputed; V^-1 applied by
// an LU solve). Linear in A'. Eigenvectors' derivatives hold only under
// assumptions on A nobody can check (distinct eigenvalues, no tie for an
// eigenvector's largest component), so, as JAX by default, they are refused.
ir::IdList eig_jvp(JvpCtx& c) {
  const bool left = ir::int_attr(c.node(), "compute_left_eigenvectors") != 0;
  const bool right = ir::int_attr(c.node(), "compute_right_eigenvectors") != 0;
  if (left || right)
    throw UnsupportedError(
        "jvp of eig: the derivatives of a general matrix's eigenvectors hold only where its eigenvalues are "
        "distinct, which nothing checks (JAX refuses them too); differentiate linalg::eigvals for the eigenvalues");
  if (c.tangents[0] == kZero) return {kZero};
  const auto wv = c.add_multi(Op::eig, {c.primals[0]},
                              {{"compute_left_eigenvectors", int64_t{0}}, {"compute_right_eigenvectors", int64_t{1}}});
  const ValueId v = wv[1];
  const int rank = c.type(v).rank();
  const ValueId da = to_dtype(c, c.tangents[0], c.type(v).dtype);
  const auto lu = c.add_multi(Op::lu, {v});
  const ValueId rows = c.add(Op::gather, {da, lu[2]}, {{"axis", int64_t{rank - 2}}, {"batch_dims", int64_t{rank - 2}}});
  const ValueId y = c.add(Op::triangular_solve, {lu[0], rows}, solve_attrs(true, true, false, false, true));
  const ValueId x = c.add(Op::triangular_solve, {lu[0], y}, solve_attrs(true, false, false, false, false));
  return {c.add(Op::reduce_sum, {c.add(Op::mul, {x, swap_last(c, v)})}, {{"axes", ir::Ints{rank - 1}}})};
}

std::vector<BatchedValue> eig_batch(BatchCtx& c) {
  std::vector<BatchedValue> out;
  for (ValueId v : c.add_multi(Op::eig, {c.at(0, 0)}, c.attrs())) out.push_back({v, 0});
  return out;
}

}  // namespace graft::ops
