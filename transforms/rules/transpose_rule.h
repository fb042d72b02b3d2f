// The interface of transpose rules: for a node that is linear in its
// "unknown" operands (those that carry tangents), given the cotangents of its
// outputs, emit the cotangents of those operands. Known operands are
// available as values of the new graph. Rules live beside the op's JVP rule
// in ops/<family>.cpp.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "transforms/rules/jvp_rule.h"

namespace graft::transforms {

// The scope of the nodes that carry a node's cotangents back: its own under
// "backward", so exported gradient graphs show which nodes are the backward
// pass (and a viewer can fold it into one box).
inline std::string backward_scope(const std::string& scope) {
  return scope.empty() ? "backward" : "backward/" + scope;
}

class TransposeCtx {
 public:
  TransposeCtx(ir::GraphBuilder& b, const ir::Node& node, ir::IdList operands, std::vector<bool> unknown,
               std::vector<ir::ValueType> operand_types, ir::IdList cotangents)
      : operands(std::move(operands)), unknown(std::move(unknown)), operand_types(std::move(operand_types)),
        cotangents(std::move(cotangents)), scoped_(backward_node(node)), emit_(b, scoped_, {}, {}, {}) {}

  const ir::Attrs& attrs() const { return emit_.attrs(); }
  const ir::Node& node() const { return emit_.node(); }
  JvpCtx& emit() { return emit_; }  // node-emitting helpers (add, scalar_like, ...)
  ValueId add(ir::Op op, ir::IdList inputs, ir::Attrs attrs = {}) {
    return emit_.add(op, std::move(inputs), std::move(attrs));
  }
  ValueId zeros(const ir::ValueType& type);  // an array of zeros of this type

  ir::IdList operands;                        // known operands' values; kZero for unknown ones
  std::vector<bool> unknown;                  // which operands are linear (carry tangents)
  std::vector<ir::ValueType> operand_types;   // every operand's type
  ir::IdList cotangents;                      // one per output (kZero if none reached it)

 private:
  // The node as its rules see it: the same, in its backward scope (what emit_ stamps on new nodes).
  static ir::Node backward_node(const ir::Node& node) {
    ir::Node n = node;
    n.scope = backward_scope(node.scope);
    return n;
  }
  ir::Node scoped_;
  JvpCtx emit_;
};

// Cotangents per operand (kZero for known operands or none).
using TransposeRule = ir::IdList (*)(TransposeCtx&);
using TransposeRuleTable = std::array<TransposeRule, ir::kNumOps>;

TransposeRule transpose_rule(ir::Op op);  // nullptr if the op has none

}  // namespace graft::transforms

namespace graft::ops {

// The transpose rule of every op ops.def calls linear: <ident>_transpose,
// defined with the op's other rules in ops/<family>.cpp (the others are
// declared only).
#define GRAFT_OP(ident, ...) ir::IdList ident##_transpose(transforms::TransposeCtx& c);
#include "ir/ops.def"
#undef GRAFT_OP

}  // namespace graft::ops
