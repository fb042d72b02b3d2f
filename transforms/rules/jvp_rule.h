// The interface of JVP rules: given a node's primal operands (already in the
// new graph) and their tangents, emit the tangents of its outputs. Rules live
// beside the op's other transform rules, in ops/<family>.cpp.
//
// A tangent is a value id or kZero, a symbolic zero that is never
// materialised: rules skip the terms it would contribute, and an output whose
// tangent depends only on zeros is itself kZero.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "ir/builder.h"

namespace graft::transforms {

using ir::ValueId;
inline constexpr ValueId kZero = -1;

// A constant `value` of `type` (a scalar literal, broadcast when needed),
// emitted at `at`'s location and scope when given.
ValueId emit_full(ir::GraphBuilder& b, double value, const ir::ValueType& type, const ir::Node* at = nullptr);

class JvpCtx {
 public:
  JvpCtx(ir::GraphBuilder& b, const ir::Node& node, ir::IdList primals, ir::IdList tangents, ir::IdList outputs)
      : primals(std::move(primals)), tangents(std::move(tangents)), outputs(std::move(outputs)), b_(b), node_(node) {}

  const ir::Node& node() const { return node_; }
  const ir::Attrs& attrs() const { return node_.attrs; }
  const ir::ValueType& type(ValueId v) const { return b_.type(v); }

  // Emitting nodes: located at, and scoped like, the node being differentiated.
  ValueId add(ir::Op op, ir::IdList inputs, ir::Attrs attrs = {});
  std::vector<ValueId> add_multi(ir::Op op, std::vector<ValueId> inputs, ir::Attrs attrs = {});
  ValueId scalar_like(double value, ValueId like);  // a constant broadcast to like's type
  ValueId zeros_like(ValueId like) { return scalar_like(0.0, like); }
  ValueId instantiate(ValueId tangent, ValueId primal);  // a zero tangent made concrete

  // Arithmetic that propagates symbolic zeros.
  ValueId tmul(ValueId tangent, ValueId factor);  // tangent * factor
  ValueId tadd(ValueId a, ValueId b);
  ValueId tneg(ValueId a);
  ValueId tsub(ValueId a, ValueId b) { return tadd(a, tneg(b)); }
  // The same op applied to the tangents in place of the primals (for ops
  // linear in the operands listed in `linear`); zero if they are all zero.
  ValueId linear(const std::vector<size_t>& linear_operands);
  // x's entries reordered along `axis` by integer positions `perm` (x's shape).
  ValueId take_along_axis(ValueId x, ValueId perm, int64_t axis);
  ir::GraphBuilder& builder() { return b_; }  // for rules that run whole passes (remat)
  // A graph's nodes copied in, its inputs bound to `inputs`; its outputs.
  std::vector<ValueId> inline_graph(const ir::Graph& g, const std::vector<ValueId>& inputs);

  ir::IdList primals;   // operands, as values of the new graph
  ir::IdList tangents;  // per operand: a value or kZero
  ir::IdList outputs;   // the node's outputs in the new graph

 private:
  ir::GraphBuilder& b_;
  const ir::Node& node_;
};

// Tangents of the node's outputs, one per output (kZero allowed).
using JvpRule = ir::IdList (*)(JvpCtx&);
using JvpRuleTable = std::array<JvpRule, ir::kNumOps>;

// Ops whose outputs never carry a tangent (ops.def's differentiable column
// gives the reason); they get zero tangents without a rule. fusion is not
// one of them: it exists only after every transform, so meeting it is an
// error (no JVP rule), never a silent zero.
bool is_non_differentiable(ir::Op op);

// The standard rules the `jvp` column names.
// DERIVATIVE("formula"): tangent * the formula (derivative_formula.cpp).
ir::IdList derivative_jvp(JvpCtx& c);
// LINEAR_IN("operands"): the op applied to those operands' tangents.
ir::IdList linear_in_jvp(JvpCtx& c);

JvpRule jvp_rule(ir::Op op);  // nullptr if the op has none

}  // namespace graft::transforms

namespace graft::ops {

// The JVP rule of every op whose ops.def `jvp` column says OWN: <ident>_jvp,
// defined with the op's other rules in ops/<family>.cpp (the others are
// declared, never defined).
#define GRAFT_OP(ident, ...) ir::IdList ident##_jvp(transforms::JvpCtx& c);
#include "ir/ops.def"
#undef GRAFT_OP

}  // namespace graft::ops
