#include "interpreter/constant_folding.h"
#include "ir/attr_access.h"

#include <memory>

#include "interpreter/kernel.h"
#include "ir/passes.h"
#include "ir/builder.h"
#include "ir/dtype.h"

namespace graft::interpreter {
namespace {

using ir::Op;
using ir::ValueId;

// Ops worth folding: pure computations (not constants themselves, and not
// nodes carrying subgraphs or collectives, which need more than a kernel).
bool foldable(Op op) {
  switch (ir::op_info(op).family) {
    case ir::OpFamily::elementwise:
    case ir::OpFamily::reduce:
    case ir::OpFamily::shape:
    case ir::OpFamily::indexing:
    case ir::OpFamily::linalg:
    case ir::OpFamily::sort:
      return true;
    default:
      return false;
  }
}

}  // namespace

FoldResult fold_constants(const ir::Graph& g, int64_t max_elements) {
  ir::GraphBuilder b;
  b.reserve(g.nodes().size());
  std::vector<ValueId> map(g.value_id_bound(), -1);
  // The literal of each value known to be constant (by value id of the new graph).
  std::vector<ir::LiteralPtr> literal;
  auto literal_of = [&](ValueId v) -> ir::LiteralPtr {
    return static_cast<size_t>(v) < literal.size() ? literal[static_cast<size_t>(v)] : nullptr;
  };
  auto remember = [&](ValueId v, ir::LiteralPtr lit) {
    if (literal.size() <= static_cast<size_t>(v)) literal.resize(static_cast<size_t>(v) + 1);
    literal[static_cast<size_t>(v)] = std::move(lit);
  };
  FoldResult result;
  for (ValueId v : g.inputs()) map[v] = b.input(g.type(v));
  for (const ir::Node& n : g.nodes()) {
    ir::IdList ins;
    bool all_constant = true;
    for (ValueId v : n.inputs) {
      ins.push_back(map[v]);
      all_constant = all_constant && literal_of(map[v]) != nullptr;
    }
    int64_t out_elements = 0;
    for (ValueId v : n.outputs) out_elements += g.type(v).num_elements();
    // Broadcasts stay symbolic: a splat costs nothing to keep, and folding it
    // would store every element.
    if (n.op != Op::constant && n.op != Op::broadcast_in_dim && all_constant && foldable(n.op) &&
        out_elements <= max_elements) {
      KernelCall call{n.op, n.attrs, {}, {}};
      for (ValueId v : ins) {
        const ir::LiteralPtr& lit = literal_of(v);
        call.inputs.push_back({&lit->type, lit->bytes.data()});
      }
      std::vector<std::shared_ptr<ir::Literal>> outs;
      for (ValueId v : n.outputs) {
        const ir::ValueType& t = g.type(v);
        outs.push_back(std::make_shared<ir::Literal>(
            ir::Literal{t, std::vector<uint8_t>(static_cast<size_t>(t.num_elements()) * ir::dtype_size(t.dtype))}));
      }
      for (auto& lit : outs) call.outputs.push_back({&lit->type, lit->bytes.data()});
      run_kernel(call);
      for (size_t k = 0; k < outs.size(); ++k) {
        ir::LiteralPtr lit = outs[k];
        ValueId c = b.add1(Op::constant, {}, {{"value", lit}}, n.loc, n.scope);
        map[n.outputs[k]] = c;
        remember(c, lit);
      }
      ++result.folded;
      continue;
    }
    ir::IdList outs = b.add(n.op, ins, n.attrs, n.loc, n.scope);
    for (size_t k = 0; k < outs.size(); ++k) map[n.outputs[k]] = outs[k];
    if (n.op == Op::constant) remember(outs[0], ir::attr<ir::LiteralPtr>(n, "value"));
  }
  std::vector<ValueId> outs;
  for (ValueId v : g.outputs()) outs.push_back(map[v]);
  result.graph = std::make_shared<const ir::Graph>(ir::dead_code_elimination(b.finish_graph(std::move(outs))));
  return result;
}

}  // namespace graft::interpreter
