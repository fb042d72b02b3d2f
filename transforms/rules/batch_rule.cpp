#include "transforms/rules/batch_rule.h"

#include <utility>

#include "transforms/vmap.h"

namespace graft::transforms {

using ir::Op;

ir::ValueType BatchCtx::unbatched_type(size_t operand) const {
  ir::ValueType t = b_.type(operands[operand].value);
  if (operands[operand].dim != kNotBatched) t.shape.erase(t.shape.begin() + operands[operand].dim);
  return t;
}

ValueId BatchCtx::add(Op op, std::vector<ValueId> inputs, ir::Attrs attrs) {
  return b_.add1(op, std::move(inputs), std::move(attrs), node_.loc, node_.scope);
}

std::vector<ValueId> BatchCtx::add_multi(Op op, std::vector<ValueId> inputs, ir::Attrs attrs) {
  return b_.add(op, std::move(inputs), std::move(attrs), node_.loc, node_.scope);
}

ValueId BatchCtx::move_axis(ValueId v, int64_t from, int64_t to) {
  if (from == to) return v;
  const int64_t rank = type(v).rank();
  ir::Ints perm;
  for (int64_t d = 0; d < rank; ++d)
    if (d != from) perm.push_back(d);
  perm.insert(perm.begin() + to, from);
  return add(Op::transpose, {v}, {{"permutation", perm}});
}

ValueId BatchCtx::at(size_t operand, int64_t dim) {
  const BatchedValue& o = operands[operand];
  if (o.dim != kNotBatched) return move_axis(o.value, o.dim, dim);
  ir::ValueType t = type(o.value);
  ir::Ints dims;
  for (int64_t d = 0; d < t.rank() + 1; ++d)
    if (d != dim) dims.push_back(d);
  t.shape.insert(t.shape.begin() + dim, axis_size);
  return add(Op::broadcast_in_dim, {o.value}, {{"shape", ir::Ints(t.shape)}, {"broadcast_dimensions", dims}});
}

int64_t past_batch_axis(int64_t axis, int64_t dim) { return axis >= dim ? axis + 1 : axis; }

int64_t BatchCtx::first_batched_dim() const {
  for (const BatchedValue& o : operands)
    if (o.dim != kNotBatched) return o.dim;
  return kNotBatched;
}

ir::GraphPtr batch_subgraph(const ir::Graph& g, const std::vector<int64_t>& in_dims, int64_t axis_size,
                            const std::string& axis_name) {
  return vmap_graph(g, in_dims, std::vector<int64_t>(g.outputs().size(), 0), axis_size, axis_name);
}

std::vector<bool> batched_outputs(const ir::Graph& g, const std::vector<int64_t>& in_dims, int64_t axis_size,
                                  const std::string& axis_name) {
  BatchedGraph bg = batch_graph(g, in_dims, axis_size, axis_name);
  std::vector<bool> out;
  for (int64_t d : bg.out_dims) out.push_back(d != kNotBatched);
  return out;
}

namespace {

BatchRuleTable build_batch_rule_table() {
  BatchRuleTable t{};
  // Filled from ops.def's `batch` column: the op's own rule, a standard one, or none.
#define GRAFT_BATCH_OWN(ident) ops::ident##_batch
#define GRAFT_BATCH_BATCH_ELEMENTWISE(ident) ops::elementwise_batch
#define GRAFT_BATCH_BATCH_AXES(ident) ops::over_axes_batch
#define GRAFT_BATCH_BATCH_AXIS(ident) ops::over_axis_batch
#define GRAFT_BATCH_NO_BATCH(ident) nullptr
#define GRAFT_OP(ident, name, arity, family, dtypes, shape, jvp, linear, batch, ...) \
  t[static_cast<size_t>(Op::ident)] = GRAFT_BATCH_##batch(ident);
#include "ir/ops.def"
#undef GRAFT_OP
#undef GRAFT_BATCH_OWN
#undef GRAFT_BATCH_BATCH_ELEMENTWISE
#undef GRAFT_BATCH_BATCH_AXES
#undef GRAFT_BATCH_BATCH_AXIS
#undef GRAFT_BATCH_NO_BATCH
  return t;
}

BatchRuleTable& table() {
  static BatchRuleTable t = build_batch_rule_table();
  return t;
}

}  // namespace

BatchRule batch_rule(Op op) { return table()[static_cast<size_t>(op)]; }

BatchRule replace_batch_rule(Op op, BatchRule rule) { return std::exchange(table()[static_cast<size_t>(op)], rule); }

}  // namespace graft::transforms
