#include "codegen/memory_plan.h"

#include <algorithm>

#include "ir/dtype.h"
#include "runtime/buffer.h"

namespace graft::codegen {
namespace {

int64_t block_bytes(const ir::ValueType& t) {
  const int64_t bytes = t.num_elements() * static_cast<int64_t>(ir::dtype_size(t.dtype));
  const int64_t a = static_cast<int64_t>(runtime::kBufferAlignment);
  return std::max<int64_t>(a, (bytes + a - 1) / a * a);
}

// Whether every output element is computed from the operands' elements at
// the same index, each read before the output is written: elementwise ops
// flagged inplace in ops.def, and fused kernels without a reduction (a
// kernel with one may read its operands again after writing elementwise
// outputs).
bool elementwise_in_place(const ir::Node& node) {
  const ir::OpInfo& info = ir::op_info(node.op);
  if (info.family == ir::OpFamily::elementwise) return info.inplace;
  if (node.op != ir::Op::fusion) return false;
  for (const ir::Node& b : std::get<ir::Graphs>(*node.attrs.find("body")).at(0)->nodes())
    if (ir::op_info(b.op).family != ir::OpFamily::elementwise && b.op != ir::Op::broadcast_in_dim &&
        b.op != ir::Op::reshape && b.op != ir::Op::constant)
      return false;
  return true;
}

struct Block {
  int64_t offset, size;
  int64_t until;  // the last node index that reads it
};

}  // namespace

MemoryPlan plan_memory(const ir::Graph& graph, const std::vector<bool>& excluded) {
  const auto& nodes = graph.nodes();
  const int64_t n_nodes = static_cast<int64_t>(nodes.size());
  MemoryPlan plan;
  plan.offset.assign(graph.value_id_bound(), -1);

  std::vector<bool> outside(graph.value_id_bound(), false);
  for (ir::ValueId v : graph.inputs()) outside[v] = true;
  for (ir::ValueId v : graph.outputs()) outside[v] = true;
  for (size_t v = 0; v < excluded.size() && v < outside.size(); ++v)
    if (excluded[v]) outside[v] = true;
  std::vector<int64_t> last_use(graph.value_id_bound(), -1);
  for (int64_t i = 0; i < n_nodes; ++i)
    for (ir::ValueId v : nodes[static_cast<size_t>(i)].inputs) last_use[v] = i;

  std::vector<Block> live;  // sorted by offset
  for (int64_t i = 0; i < n_nodes; ++i) {
    const ir::Node& node = nodes[static_cast<size_t>(i)];
    // Blocks whose values were last read before this node are free again.
    live.erase(std::remove_if(live.begin(), live.end(), [i](const Block& b) { return b.until < i; }), live.end());
    const bool can_run_in_place = elementwise_in_place(node);
    std::vector<ir::ValueId> taken;
    for (ir::ValueId v : node.outputs) {
      if (outside[v]) continue;
      const int64_t size = block_bytes(graph.type(v));
      const int64_t until = std::max(last_use[v], i);
      plan.sum_bytes += size;
      ++plan.placed;
      // In place: an operand dying here, of this size, not yet taken.
      bool placed = false;
      if (can_run_in_place) {
        for (ir::ValueId u : node.inputs) {
          if (plan.offset[u] < 0 || last_use[u] != i || block_bytes(graph.type(u)) != size ||
              ir::dtype_size(graph.type(u).dtype) != ir::dtype_size(graph.type(v).dtype) ||
              graph.type(u).shape != graph.type(v).shape ||
              std::find(taken.begin(), taken.end(), u) != taken.end())
            continue;
          taken.push_back(u);
          plan.offset[v] = plan.offset[u];
          for (Block& b : live)
            if (b.offset == plan.offset[u]) b.until = std::max(b.until, until);
          ++plan.in_place;
          placed = true;
          break;
        }
      }
      if (placed) continue;
      // First fit: the lowest gap between live blocks that holds `size`.
      int64_t at = 0;
      auto it = live.begin();
      for (; it != live.end(); ++it) {
        if (it->offset - at >= size) break;
        at = std::max(at, it->offset + it->size);
      }
      live.insert(it, Block{at, size, until});
      plan.offset[v] = at;
      plan.arena_bytes = std::max(plan.arena_bytes, at + size);
    }
  }
  return plan;
}

}  // namespace graft::codegen
