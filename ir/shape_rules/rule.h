// The interface every shape/dtype rule implements, and the registry that
// finds the rule of an op. Rules live by family, beside each op's transform
// rules, in ops/<family>.cpp.
//
// Primitives are strict, like XLA's: binary ops want equal shapes and dtypes,
// axes are non-negative and normalised. NumPy broadcasting, promotion and
// negative axes belong to the API layer, which lowers to these primitives.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "ir/attrs.h"
#include "ir/graph.h"
#include "ir/op.h"
#include "ir/value.h"

namespace graft::ir {

// What a rule sees of a node: op, operand types, attributes; and how it fails.
class RuleCtx {
 public:
  RuleCtx(Op op, const std::vector<ValueType>& inputs, const Attrs& attrs, const SourceLoc* loc = nullptr,
          int node_id = -1)
      : op_(op), inputs_(inputs), attrs_(attrs), loc_(loc), node_id_(node_id) {}

  Op op() const { return op_; }
  const std::vector<ValueType>& inputs() const { return inputs_; }
  const ValueType& input(size_t i) const { return inputs_[i]; }
  size_t num_inputs() const { return inputs_.size(); }
  const Attrs& attrs() const { return attrs_; }

  // Required attributes of a given kind (ops.def's schema, checked before the
  // rule runs); a missing or mistyped one is a GraphFormatError.
  int64_t attr_int(const std::string& name) const;
  const Ints& attr_ints(const std::string& name) const;
  double attr_float(const std::string& name) const;
  DType attr_dtype(const std::string& name) const;
  const std::string& attr_string(const std::string& name) const;
  const Graphs& attr_graphs(const std::string& name) const;
  const Graph& attr_graph(const std::string& name) const;  // a graphs attribute holding exactly one
  const Literal& attr_literal(const std::string& name) const;
  const HostCallback& attr_callback(const std::string& name) const;
  bool attr_bool(const std::string& name) const;  // an int attribute that must be 0 or 1

  // Throw with the op's name, every operand's type, and the node's location.
  [[noreturn]] void shape_error(const std::string& what) const;
  [[noreturn]] void dtype_error(const std::string& what) const;
  [[noreturn]] void format_error(const std::string& what) const;  // a malformed node: attributes

  // Common checks.
  int axis(int64_t axis, int rank, const std::string& what) const;  // 0 <= axis < rank
  void check_shape(const Shape& shape, const std::string& what) const;  // dims in [0, kMaxDim]
  void check_permutation(const Ints& perm, int rank, const std::string& what) const;
  void check_same_dtype(const ValueType& a, const ValueType& b) const;  // a DTypeError naming both
  // A subgraph's signature must match expected input and output types.
  void check_signature(const Graph& g, const std::string& what, const std::vector<ValueType>& in,
                       const std::vector<ValueType>* out) const;

 private:
  std::string context() const;
  const AttrValue& attr(const std::string& name, AttrKind kind) const;

  Op op_;
  const std::vector<ValueType>& inputs_;
  const Attrs& attrs_;
  const SourceLoc* loc_;
  int node_id_;
};

// A rule's output types. Nearly every op has one output, held inline, so
// inferring a node's type allocates nothing but its shape.
class OutTypes {
 public:
  OutTypes() = default;  // no outputs
  OutTypes(ValueType one) : one_(std::move(one)), single_(true) {}
  OutTypes(std::vector<ValueType> many) : many_(std::move(many)) {}

  size_t size() const { return single_ ? 1 : many_.size(); }
  ValueType& operator[](size_t i) { return single_ ? one_ : many_[i]; }
  const ValueType& operator[](size_t i) const { return single_ ? one_ : many_[i]; }
  ValueType* begin() { return single_ ? &one_ : many_.data(); }
  ValueType* end() { return begin() + size(); }
  const ValueType* begin() const { return single_ ? &one_ : many_.data(); }
  const ValueType* end() const { return begin() + size(); }
  std::vector<ValueType> to_vector() &&;

 private:
  ValueType one_;
  std::vector<ValueType> many_;
  bool single_ = false;
};

using ShapeRule = OutTypes (*)(const RuleCtx&);
using ShapeRuleTable = std::array<ShapeRule, kNumOps>;

// Throws unless the op's `dtypes` column accepts d.
void check_accepted_dtype(const RuleCtx& c, DType d);

// The rule of an op, or nullptr if it has none (the coverage test forbids that).
ShapeRule shape_rule(Op op);

// Output types of a node: checks arity, then runs the op's rule.
OutTypes infer_output_types(Op op, const std::vector<ValueType>& inputs, const Attrs& attrs,
                            const SourceLoc* loc = nullptr, int node_id = -1);
// The same, as a vector.
std::vector<ValueType> infer_types(Op op, const std::vector<ValueType>& inputs, const Attrs& attrs,
                                   const SourceLoc* loc = nullptr, int node_id = -1);

}  // namespace graft::ir

namespace graft::ops {

// The shape/dtype rule of every op whose ops.def `shape` column says OWN:
// <ident>_shape, defined with the op's other rules in ops/<family>.cpp (the
// others are declared, never defined).
#define GRAFT_OP(ident, ...) ir::OutTypes ident##_shape(const ir::RuleCtx& c);
#include "ir/ops.def"
#undef GRAFT_OP

// The standard rules the `shape` column names (ir/op.h: ShapeRuleKind),
// beside the family rules that resemble them.
ir::OutTypes same_type_rule(const ir::RuleCtx& c);     // SAME_TYPE (ops/elementwise.cpp)
ir::OutTypes bool_result_rule(const ir::RuleCtx& c);   // BOOL_RESULT (ops/elementwise.cpp)
ir::OutTypes reduces_axes_rule(const ir::RuleCtx& c);  // REDUCES_AXES (ops/reduce.cpp)
ir::OutTypes reduces_axis_rule(const ir::RuleCtx& c);  // REDUCES_AXIS (ops/reduce.cpp)
ir::OutTypes scans_axis_rule(const ir::RuleCtx& c);    // SCANS_AXIS (ops/reduce.cpp)

}  // namespace graft::ops
