// Transform rules of dot_general. JVP: bilinear, d(a.b) = da.b + a.db.
#include <algorithm>

#include "graft/errors.h"
#include "ir/attr_access.h"
#include "transforms/rules/batch_rule.h"
#include "transforms/rules/jvp_rule.h"
#include "transforms/rules/transpose_rule.h"

namespace graft::transforms {

using ir::Op;

// ---- JVP rules

ir::IdList dot_general_jvp(JvpCtx& c) {
  ValueId a = c.tangents[0] == kZero ? kZero : c.add(Op::dot_general, {c.tangents[0], c.primals[1]}, c.attrs());
  ValueId b = c.tangents[1] == kZero ? kZero : c.add(Op::dot_general, {c.primals[0], c.tangents[1]}, c.attrs());
  return {c.tadd(a, b)};
}


// ---- transpose rules
namespace {

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
                 {{"lhs_contracting", other_free}, {"rhs_contracting", ct_other_free},
                  {"lhs_batch", other_b}, {"rhs_batch", ct_batch}});
  ValueId r = c.add(Op::dot_general, {ct, other},
                    {{"lhs_contracting", ct_other_free}, {"rhs_contracting", other_free},
                     {"lhs_batch", ct_batch}, {"rhs_batch", other_b}});
  return is_identity(free_first) ? r : c.add(Op::transpose, {r}, {{"permutation", free_first}});
}

}  // namespace

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


// ---- batching rules (vmap)

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

}  // namespace graft::transforms
