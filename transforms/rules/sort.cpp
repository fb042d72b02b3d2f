// Transform rules of sort. JVP: sorting permutes, so each tangent is
// permuted alike: the permutation comes from sorting an iota along with the
// keys, and is applied by a gather along the sorted axis.
#include <algorithm>

#include "transforms/rules/jvp_rule.h"

namespace graft::transforms {
namespace {

using ir::Op;

// x's entries reordered along `axis` by perm (same shape as x): a gather
// with every other axis as a batch axis, after moving `axis` last.
ValueId take_along_axis(JvpCtx& c, ValueId x, ValueId perm, int64_t axis) {
  const ir::ValueType t = c.type(x);
  int64_t r = t.rank();
  ir::Ints to_last, from_last(r);
  for (int64_t d = 0; d < r; ++d)
    if (d != axis) to_last.push_back(d);
  to_last.push_back(axis);
  for (int64_t d = 0; d < r; ++d) from_last[to_last[d]] = d;
  auto move = [&](ValueId v, const ir::Ints& p) {
    bool identity = true;
    for (int64_t d = 0; d < r; ++d) identity = identity && p[d] == d;
    return identity ? v : c.add(Op::transpose, {v}, {{"permutation", p}});
  };
  // gather(x', perm'; axis = r-1, batch_dims = r-1): out[b..., i] = x'[b..., perm'[b..., i]]
  // needs indices of shape [b..., n] (the gather result is x'[:axis] + idx[b:] + x'[axis+1:]).
  ValueId xs = move(x, to_last), ps = move(perm, to_last);
  ValueId g = c.add(Op::gather, {xs, ps}, {{"axis", r - 1}, {"batch_dims", r - 1}});
  return move(g, from_last);
}

std::vector<ValueId> sort_rule(JvpCtx& c) {
  int64_t dim = std::get<int64_t>(*c.attrs().find("dimension"));
  int64_t num_keys = std::get<int64_t>(*c.attrs().find("num_keys"));
  const ir::ValueType t = c.type(c.primals[0]);
  ValueId iota = c.add(Op::iota, {}, {{"dtype", DType::i32}, {"shape", ir::Ints(t.shape)}, {"dimension", dim}});
  std::vector<ValueId> keys(c.primals.begin(), c.primals.begin() + num_keys);
  keys.push_back(iota);
  ir::Attrs attrs = c.attrs();
  std::vector<ValueId> sorted = c.add_multi(Op::sort, keys, attrs);
  ValueId perm = sorted.back();
  std::vector<ValueId> out;
  for (size_t k = 0; k < c.primals.size(); ++k)
    out.push_back(c.tangents[k] == kZero ? kZero : take_along_axis(c, c.tangents[k], perm, dim));
  return out;
}

}  // namespace

void register_sort_jvp_rules(JvpRuleTable& t) { t[static_cast<size_t>(Op::sort)] = sort_rule; }

}  // namespace graft::transforms
