#include "transforms/rules/jvp_rule.h"

#include <cstring>

#include "ir/dtype.h"
#include "ir/element_type.h"
#include "ir/inline.h"

namespace graft::transforms {

using ir::Op;

ValueId JvpCtx::add(Op op, ir::IdList inputs, ir::Attrs attrs) {
  return b_.add1(op, std::move(inputs), std::move(attrs), node_.loc, node_.scope);
}

std::vector<ValueId> JvpCtx::add_multi(Op op, std::vector<ValueId> inputs, ir::Attrs attrs) {
  return b_.add(op, std::move(inputs), std::move(attrs), node_.loc, node_.scope);
}

ValueId emit_full(ir::GraphBuilder& b, double value, const ir::ValueType& type, const ir::Node* at) {
  ir::SourceLoc loc = at ? at->loc : ir::SourceLoc{};
  std::string scope = at ? at->scope : std::string{};
  ir::Literal lit{ir::ValueType{type.dtype, {}}, std::vector<uint8_t>(ir::dtype_size(type.dtype))};
  ir::visit_element_type(type.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T v = T(static_cast<ir::compute_type<T>>(value));  // small numbers (0, 1, 0.5): exact in every dtype
    std::memcpy(lit.bytes.data(), &v, sizeof v);
  });
  ValueId s = b.add1(Op::constant, {}, {{"value", std::make_shared<const ir::Literal>(std::move(lit))}}, loc, scope);
  if (type.rank() == 0) return s;
  return b.add1(Op::broadcast_in_dim, {s}, {{"shape", ir::Ints(type.shape)}, {"broadcast_dimensions", ir::Ints{}}},
                loc, scope);
}

ValueId JvpCtx::scalar_like(double value, ValueId like) {
  const ir::ValueType t = type(like);  // a copy: adding nodes may move the builder's type table
  return emit_full(b_, value, t, &node_);
}

ValueId JvpCtx::instantiate(ValueId tangent, ValueId primal) {
  return tangent == kZero ? zeros_like(primal) : tangent;
}

ValueId JvpCtx::tmul(ValueId tangent, ValueId factor) {
  return tangent == kZero ? kZero : add(Op::mul, {tangent, factor});
}

ValueId JvpCtx::tadd(ValueId a, ValueId b) {
  if (a == kZero) return b;
  if (b == kZero) return a;
  return add(Op::add, {a, b});
}

ValueId JvpCtx::tneg(ValueId a) { return a == kZero ? kZero : add(Op::neg, {a}); }

ValueId JvpCtx::linear(const std::vector<size_t>& linear_operands) {
  bool any = false;
  for (size_t i : linear_operands) any = any || tangents[i] != kZero;
  if (!any) return kZero;
  std::vector<ValueId> args = primals;
  for (size_t i : linear_operands) args[i] = instantiate(tangents[i], primals[i]);
  return add(node_.op, std::move(args), node_.attrs);
}

std::vector<ValueId> JvpCtx::inline_graph(const ir::Graph& g, const std::vector<ValueId>& inputs) {
  return ir::inline_graph(b_, g, inputs);
}

// A gather with every other axis as a batch axis, after moving `axis` last:
// out[b..., i] = x[b..., perm[b..., i]].
ValueId JvpCtx::take_along_axis(ValueId x, ValueId perm, int64_t axis) {
  const ir::ValueType t = type(x);
  int64_t r = t.rank();
  ir::Ints to_last, from_last(r);
  for (int64_t d = 0; d < r; ++d)
    if (d != axis) to_last.push_back(d);
  to_last.push_back(axis);
  for (int64_t d = 0; d < r; ++d) from_last[to_last[d]] = d;
  auto move = [&](ValueId v, const ir::Ints& p) {
    bool identity = true;
    for (int64_t d = 0; d < r; ++d) identity = identity && p[d] == d;
    return identity ? v : add(Op::transpose, {v}, {{"permutation", p}});
  };
  ValueId g = add(Op::gather, {move(x, to_last), move(perm, to_last)}, {{"axis", r - 1}, {"batch_dims", r - 1}});
  return move(g, from_last);
}

ir::IdList linear_in_jvp(JvpCtx& c) {
  const std::string_view text = ir::op_info(c.node().op).jvp.text;
  std::vector<size_t> operands;
  if (text == "all") {
    for (size_t i = 0; i < c.primals.size(); ++i) operands.push_back(i);
  } else {
    size_t k = 0;
    while (k < text.size()) {
      if (text[k] == ' ') { ++k; continue; }
      size_t v = 0;
      while (k < text.size() && text[k] >= '0' && text[k] <= '9') v = v * 10 + static_cast<size_t>(text[k++] - '0');
      operands.push_back(v);
    }
  }
  return {c.linear(operands)};
}

bool is_non_differentiable(Op op) { return !ir::is_differentiable(op) && !ir::is_jit_internal(op); }

namespace {

JvpRuleTable build_jvp_rule_table() {
  JvpRuleTable t{};
  // Filled from ops.def's `jvp` column: the op's own rule, a standard one, or none.
#define GRAFT_DROP(ident)
#define GRAFT_JVP_OWN(ident) ops::ident##_jvp
#define GRAFT_JVP_DERIVATIVE(formula) derivative_jvp GRAFT_DROP
#define GRAFT_JVP_LINEAR_IN(operands) linear_in_jvp GRAFT_DROP
#define GRAFT_JVP_NO_JVP(why) nullptr GRAFT_DROP
#define GRAFT_OP(ident, name, arity, family, dtypes, shape, jvp, ...) \
  t[static_cast<size_t>(Op::ident)] = GRAFT_JVP_##jvp(ident);
#include "ir/ops.def"
#undef GRAFT_OP
#undef GRAFT_JVP_OWN
#undef GRAFT_JVP_DERIVATIVE
#undef GRAFT_JVP_LINEAR_IN
#undef GRAFT_JVP_NO_JVP
#undef GRAFT_DROP
  return t;
}

}  // namespace

JvpRule jvp_rule(Op op) {
  static const JvpRuleTable table = build_jvp_rule_table();
  return table[static_cast<size_t>(op)];
}

}  // namespace graft::transforms
