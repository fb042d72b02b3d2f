// A catalogue of nodes for every op in ir/ops.def: well-typed ones with the
// output types their shape rule must infer, and ill-typed ones with the error
// the rule must raise. Shape-rule tests check the rules against it; other
// tests (printers, serialisation, transforms) can reuse the valid cases as a
// ready-made set of one-node graphs covering every primitive.
#pragma once

#include <string>
#include <vector>

#include "ir/attrs.h"
#include "ir/graph.h"
#include "ir/op.h"
#include "ir/value.h"

namespace graft::ir::testing {

// A well-typed node: operand types and attributes, and what the rule infers.
struct OpCase {
  Op op;
  std::vector<ValueType> inputs;
  Attrs attrs;
  std::vector<ValueType> expected_outputs;
};

// An ill-typed node: the rule must throw the error of `kind` (ShapeError,
// DTypeError, or GraphFormatError for attributes that break ops.def's schema) with a message containing `message_fragment`.
struct BadOpCase {
  enum Kind { shape, dtype, format };

  Op op;
  std::vector<ValueType> inputs;
  Attrs attrs;
  Kind kind;
  std::string message_fragment;
};

// At least one case per op; more where attributes make the rule interesting.
const std::vector<OpCase>& valid_op_cases();
// At least one case per op.
const std::vector<BadOpCase>& invalid_op_cases();

// A one-node graph built with GraphBuilder: its inputs are the case's operand
// types, its outputs the node's outputs.
GraphPtr graph_of(const OpCase& c);

// "add(f32[3], f32[4]) {axes=[0,1]}": for test failure messages.
std::string case_summary(Op op, const std::vector<ValueType>& inputs, const Attrs& attrs);
inline std::string case_summary(const OpCase& c) { return case_summary(c.op, c.inputs, c.attrs); }
inline std::string case_summary(const BadOpCase& c) { return case_summary(c.op, c.inputs, c.attrs); }

}  // namespace graft::ir::testing
