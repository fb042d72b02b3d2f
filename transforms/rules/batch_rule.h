// The interface of batching rules (vmap): given a node's operands, each
// either batched (with the batch axis at some dimension) or not, emit the
// node's batched outputs and say where their batch axis is. Rules live beside
// the op's other transform rules, in ops/<family>.cpp.
//
// Rules keep the batch axis where the op can carry it natively (elementwise
// ops, reductions with shifted axes, dot_general's batch dimensions) and move
// it only when they must.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "ir/builder.h"

namespace graft::transforms {

using ir::ValueId;
inline constexpr int64_t kNotBatched = -1;

// A value of the batched graph and the position of its batch axis
// (kNotBatched if it has none).
struct BatchedValue {
  ValueId value;
  int64_t dim;
};

// Each of `outs` with its batch axis at 0 (a rule that stacks its results).
inline std::vector<BatchedValue> at_zero(const std::vector<ValueId>& outs) {
  std::vector<BatchedValue> r;
  for (ValueId v : outs) r.push_back({v, 0});
  return r;
}

class BatchCtx {
 public:
  BatchCtx(ir::GraphBuilder& b, const ir::Node& node, std::vector<BatchedValue> operands, int64_t axis_size,
           const std::string& axis_name)
      : operands(std::move(operands)), axis_size(axis_size), axis_name(axis_name), b_(b), node_(node) {}

  const ir::Node& node() const { return node_; }
  const ir::Attrs& attrs() const { return node_.attrs; }
  ir::GraphBuilder& builder() { return b_; }
  // The operand's type without its batch axis (as the original node saw it).
  ir::ValueType unbatched_type(size_t operand) const;
  ir::ValueType type(ValueId v) const { return b_.type(v); }  // a copy: adds move the type table

  // Emitting nodes: located at, and scoped like, the node being batched.
  ValueId add(ir::Op op, std::vector<ValueId> inputs, ir::Attrs attrs = {});
  std::vector<ValueId> add_multi(ir::Op op, std::vector<ValueId> inputs, ir::Attrs attrs = {});

  // Operand i with its batch axis at `dim` (moved there, or broadcast in if
  // the operand is not batched).
  ValueId at(size_t operand, int64_t dim);
  // v (batch axis at `from`) with the batch axis moved to `to`.
  ValueId move_axis(ValueId v, int64_t from, int64_t to);
  // Where the first batched operand has its batch axis (kNotBatched if none
  // is): ops whose operands must line up move the others there.
  int64_t first_batched_dim() const;

  std::vector<BatchedValue> operands;
  int64_t axis_size;
  const std::string& axis_name;  // the vmap's axis name ("" if none)

 private:
  ir::GraphBuilder& b_;
  const ir::Node& node_;
};

// The batched outputs of the node, one per output.
using BatchRule = std::vector<BatchedValue> (*)(BatchCtx&);
using BatchRuleTable = std::array<BatchRule, ir::kNumOps>;

// iota and constant, which have no operands, are never batched and need no
// rule; every other op has one.
BatchRule batch_rule(ir::Op op);  // nullptr if the op has none
// Puts `rule` in op's place and returns the rule it had: only for the
// mutation tests, which show that a deliberately wrong rule fails the
// corpus. Not thread-safe; restore the old rule before anything else runs.
BatchRule replace_batch_rule(ir::Op op, BatchRule rule);

// For rules of ops that take subgraphs: g batched with its inputs' batch
// dims in_dims; every output comes out batched at dimension 0.
ir::GraphPtr batch_subgraph(const ir::Graph& g, const std::vector<int64_t>& in_dims, int64_t axis_size,
                            const std::string& axis_name);
// Which outputs of g are batched when its inputs with in_dims != kNotBatched are.
std::vector<bool> batched_outputs(const ir::Graph& g, const std::vector<int64_t>& in_dims, int64_t axis_size,
                                  const std::string& axis_name);

// An axis number of the unbatched operand, renumbered past a batch axis at dim.
int64_t past_batch_axis(int64_t axis, int64_t dim);

}  // namespace graft::transforms

namespace graft::ops {

// The batching rule of every op whose ops.def `batch` column says OWN:
// <ident>_batch, defined with the op's other rules in ops/<family>.cpp (the
// others are declared, never defined).
#define GRAFT_OP(ident, ...) std::vector<transforms::BatchedValue> ident##_batch(transforms::BatchCtx& c);
#include "ir/ops.def"
#undef GRAFT_OP

// The standard rules the `batch` column names.
std::vector<transforms::BatchedValue> elementwise_batch(
    transforms::BatchCtx& c);  // BATCH_ELEMENTWISE (ops/elementwise.cpp)
std::vector<transforms::BatchedValue> over_axes_batch(transforms::BatchCtx& c);  // BATCH_AXES (ops/reduce.cpp)
std::vector<transforms::BatchedValue> over_axis_batch(transforms::BatchCtx& c);  // BATCH_AXIS (ops/reduce.cpp)

}  // namespace graft::ops
