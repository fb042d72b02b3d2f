// Transform rules of indexing: linear in the data operands, constant in the
// indices. JVP rules below.
#include <algorithm>

#include "transforms/rules/jvp_rule.h"
#include "transforms/rules/transpose_rule.h"

namespace graft::transforms {
namespace {

using ir::Op;
using Out = std::vector<ValueId>;

Out in_operand(JvpCtx& c) { return {c.linear({0})}; }
Out in_operand_and_update(JvpCtx& c) { return {c.linear({0, 1})}; }
Out scatter_add_rule(JvpCtx& c) { return {c.linear({0, 2})}; }

}  // namespace

void register_indexing_jvp_rules(JvpRuleTable& t) {
  t[static_cast<size_t>(Op::dynamic_slice)] = in_operand;
  t[static_cast<size_t>(Op::gather)] = in_operand;
  t[static_cast<size_t>(Op::dynamic_update_slice)] = in_operand_and_update;
  t[static_cast<size_t>(Op::scatter_add)] = scatter_add_rule;
}


// ---- transpose rules
namespace {

using Cts = std::vector<ValueId>;

Cts dynamic_slice_transpose(TransposeCtx& c) {
  ValueId ct = c.cotangents[0];
  Cts out(c.operand_types.size(), kZero);
  if (ct == kZero) return out;
  std::vector<ValueId> args = {c.zeros(c.operand_types[0]), ct};
  for (size_t i = 1; i < c.operands.size(); ++i) args.push_back(c.operands[i]);
  out[0] = c.add(Op::dynamic_update_slice, args);
  return out;
}

Cts dynamic_update_slice_transpose(TransposeCtx& c) {
  ValueId ct = c.cotangents[0];
  Cts out(c.operand_types.size(), kZero);
  if (ct == kZero) return out;
  std::vector<ValueId> starts(c.operands.begin() + 2, c.operands.end());
  if (c.unknown[0]) {
    std::vector<ValueId> args = {ct, c.zeros(c.operand_types[1])};
    args.insert(args.end(), starts.begin(), starts.end());
    out[0] = c.add(Op::dynamic_update_slice, args);
  }
  if (c.unknown[1]) {
    std::vector<ValueId> args = {ct};
    args.insert(args.end(), starts.begin(), starts.end());
    out[1] = c.add(Op::dynamic_slice, args, {{"slice_sizes", ir::Ints(c.operand_types[1].shape)}});
  }
  return out;
}

Cts gather_transpose(TransposeCtx& c) {
  ValueId ct = c.cotangents[0];
  if (ct == kZero) return {kZero, kZero};
  return {c.add(Op::scatter_add, {c.zeros(c.operand_types[0]), c.operands[1], ct}, c.attrs()), kZero};
}

Cts scatter_add_transpose(TransposeCtx& c) {
  ValueId ct = c.cotangents[0];
  if (ct == kZero) return {kZero, kZero, kZero};
  return {c.unknown[0] ? ct : kZero, kZero,
          c.unknown[2] ? c.add(Op::gather, {ct, c.operands[1]}, c.attrs()) : kZero};
}

}  // namespace

void register_indexing_transpose_rules(TransposeRuleTable& t) {
  t[static_cast<size_t>(Op::dynamic_slice)] = dynamic_slice_transpose;
  t[static_cast<size_t>(Op::dynamic_update_slice)] = dynamic_update_slice_transpose;
  t[static_cast<size_t>(Op::gather)] = gather_transpose;
  t[static_cast<size_t>(Op::scatter_add)] = scatter_add_transpose;
}

}  // namespace graft::transforms
