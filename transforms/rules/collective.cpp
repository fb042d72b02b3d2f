// Transform rules of collectives over a named axis. JVP rules, then
// transpose rules. Each replica along the axis holds its own x_i:
//   psum          y_j = sum_i x_i          (self-adjoint: transpose is psum)
//   all_gather    y_j = [x_0, ..., x_n-1]  (transpose: psum_scatter)
//   psum_scatter  y_j = (sum_i x_i)[j]     (transpose: all_gather)
//   ppermute      y_d = x_s per pair       (transpose: the inverse pairs)
// pmax/pmin are not linear: the tangent comes from the replicas that attain
// the extreme, averaged when several tie (as reduce_max's rule does).
#include "transforms/rules/batch_rule.h"
#include "transforms/rules/jvp_rule.h"
#include "transforms/rules/transpose_rule.h"

namespace graft::transforms {
namespace {

using ir::Op;
using Out = std::vector<ValueId>;

Out linear_rule(JvpCtx& c) { return {c.linear({0})}; }

ir::Attrs axis_only(const ir::Attrs& attrs) {
  return {{"axis_name", std::get<std::string>(*attrs.find("axis_name"))}};
}

Out extreme_rule(JvpCtx& c) {
  if (c.tangents[0] == kZero) return {kZero};
  ValueId x = c.primals[0];
  ValueId hit = c.add(Op::eq, {x, c.outputs[0]});
  ValueId weights = c.add(Op::convert_element_type, {hit}, {{"new_dtype", c.type(x).dtype}});
  ir::Attrs sum_attrs = axis_only(c.attrs());
  ValueId count = c.add(Op::psum, {weights}, sum_attrs);
  ValueId picked = c.add(Op::psum, {c.add(Op::mul, {c.tangents[0], weights})}, sum_attrs);
  return {c.add(Op::div, {picked, count})};
}

}  // namespace

void register_collective_jvp_rules(JvpRuleTable& t) {
  for (Op op : {Op::psum, Op::all_gather, Op::psum_scatter, Op::ppermute}) t[static_cast<size_t>(op)] = linear_rule;
  t[static_cast<size_t>(Op::pmax)] = extreme_rule;
  t[static_cast<size_t>(Op::pmin)] = extreme_rule;
}

// ---- transpose rules
namespace {

std::vector<ValueId> psum_transpose(TransposeCtx& c) {
  if (c.cotangents[0] == kZero) return {kZero};
  return {c.add(Op::psum, {c.cotangents[0]}, c.attrs())};
}

// all_gather and psum_scatter share attributes (axis_name, axis_size, axis,
// tiled) and are each other's transpose.
template <Op Other>
std::vector<ValueId> swap_transpose(TransposeCtx& c) {
  if (c.cotangents[0] == kZero) return {kZero};
  return {c.add(Other, {c.cotangents[0]}, c.attrs())};
}

std::vector<ValueId> ppermute_transpose(TransposeCtx& c) {
  if (c.cotangents[0] == kZero) return {kZero};
  ir::Ints perm = std::get<ir::Ints>(*c.attrs().find("perm"));
  for (size_t i = 0; i + 1 < perm.size(); i += 2) std::swap(perm[i], perm[i + 1]);
  return {c.add(Op::ppermute, {c.cotangents[0]},
                {{"axis_name", std::get<std::string>(*c.attrs().find("axis_name"))}, {"perm", perm}})};
}

}  // namespace

void register_collective_transpose_rules(TransposeRuleTable& t) {
  t[static_cast<size_t>(Op::psum)] = psum_transpose;
  t[static_cast<size_t>(Op::all_gather)] = swap_transpose<Op::psum_scatter>;
  t[static_cast<size_t>(Op::psum_scatter)] = swap_transpose<Op::all_gather>;
  t[static_cast<size_t>(Op::ppermute)] = ppermute_transpose;
}

// ---- batching rules (vmap)

void register_collective_batch_rules(BatchRuleTable&) {}

}  // namespace graft::transforms
