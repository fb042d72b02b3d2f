#include "codegen/memory_plan.h"

#include "ir/in_place.h"

#include <algorithm>
#include <functional>
#include <map>
#include <queue>
#include <set>

#include "ir/dtype.h"
#include "runtime/buffer.h"

namespace graft::codegen {
namespace {

int64_t block_bytes(const ir::ValueType& t) {
  const int64_t bytes = t.num_elements() * static_cast<int64_t>(ir::dtype_size(t.dtype));
  const int64_t a = static_cast<int64_t>(runtime::kBufferAlignment);
  return std::max<int64_t>(a, (bytes + a - 1) / a * a);
}

// Blocks of one arena: best fit among the free gaps (by size, then offset),
// freed blocks coalesced with free neighbours, the arena's end growing only
// when no gap fits. Each step is O(log blocks), so planning stays linear in
// the graph even when a gradient keeps thousands of residuals alive.
class Arena {
 public:
  int32_t allocate(int64_t size, int64_t until) {
    int64_t at;
    auto fit = by_size_.lower_bound({size, -1});
    if (fit != by_size_.end()) {
      at = fit->second;
      const int64_t gap = fit->first;
      remove_gap(at, gap);
      if (gap > size) add_gap(at + size, gap - size);
    } else if (!by_offset_.empty() && std::prev(by_offset_.end())->first + std::prev(by_offset_.end())->second == end_) {
      // The last gap touches the end: start there and grow the end.
      auto last = std::prev(by_offset_.end());
      at = last->first;
      remove_gap(at, last->second);
      end_ = at + size;
    } else {
      at = end_;
      end_ += size;
    }
    peak_ = std::max(peak_, end_);
    blocks_.push_back(Block{at, size, until});
    const auto id = static_cast<int32_t>(blocks_.size() - 1);
    expiry_.push({until, id});
    return id;
  }

  // The block lives until `until` now (an output took it over in place).
  void extend(int32_t id, int64_t until) {
    if (until <= blocks_[static_cast<size_t>(id)].until) return;
    blocks_[static_cast<size_t>(id)].until = until;
    expiry_.push({until, id});
  }

  // Frees every block last read before node `i`.
  void free_until(int64_t i) {
    while (!expiry_.empty() && expiry_.top().first < i) {
      auto [until, id] = expiry_.top();
      expiry_.pop();
      const Block& b = blocks_[static_cast<size_t>(id)];
      if (b.until != until) continue;  // extended since: a later entry frees it
      release(b.offset, b.size);
    }
  }

  int64_t offset(int32_t id) const { return blocks_[static_cast<size_t>(id)].offset; }
  int64_t peak() const { return peak_; }

 private:
  struct Block {
    int64_t offset, size;
    int64_t until;  // the last node index that reads it
  };

  void add_gap(int64_t at, int64_t size) {
    by_offset_[at] = size;
    by_size_.insert({size, at});
  }
  void remove_gap(int64_t at, int64_t size) {
    by_offset_.erase(at);
    by_size_.erase({size, at});
  }
  void release(int64_t at, int64_t size) {
    auto next = by_offset_.lower_bound(at);
    if (next != by_offset_.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second == at) {
        at = prev->first;
        size += prev->second;
        remove_gap(prev->first, prev->second);
      }
    }
    next = by_offset_.lower_bound(at + size);
    if (next != by_offset_.end() && next->first == at + size) {
      size += next->second;
      remove_gap(next->first, next->second);
    }
    if (at + size == end_) end_ = at;  // the end comes back: no gap at the top
    else add_gap(at, size);
  }

  std::vector<Block> blocks_;
  std::priority_queue<std::pair<int64_t, int32_t>, std::vector<std::pair<int64_t, int32_t>>, std::greater<>> expiry_;
  std::map<int64_t, int64_t> by_offset_;          // free gaps: offset -> size
  std::set<std::pair<int64_t, int64_t>> by_size_;  // free gaps: (size, offset)
  int64_t end_ = 0, peak_ = 0;
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

  Arena arena;
  std::vector<int32_t> block_of(graph.value_id_bound(), -1);
  for (int64_t i = 0; i < n_nodes; ++i) {
    const ir::Node& node = nodes[static_cast<size_t>(i)];
    arena.free_until(i);  // blocks whose values were last read before this node
    const bool can_run_in_place = ir::elementwise_in_place(node);
    // dynamic_update_slice and scatter_add over their operand 0, when it is read through no other slot.
    const bool over_first = !can_run_in_place && ir::updates_first_operand_in_place(node) &&
                            std::count(node.inputs.begin(), node.inputs.end(), node.inputs[0]) == 1;
    std::vector<ir::ValueId> taken;
    for (ir::ValueId v : node.outputs) {
      if (outside[v]) continue;
      const int64_t size = block_bytes(graph.type(v));
      const int64_t until = std::max(last_use[v], i);
      plan.sum_bytes += size;
      ++plan.placed;
      // In place: an operand dying here, of this size, not yet taken.
      bool placed = false;
      if (can_run_in_place || over_first) {
        for (ir::ValueId u : node.inputs) {
          if (over_first && u != node.inputs[0]) continue;
          if (block_of[u] < 0 || last_use[u] != i || block_bytes(graph.type(u)) != size ||
              ir::dtype_size(graph.type(u).dtype) != ir::dtype_size(graph.type(v).dtype) ||
              graph.type(u).shape != graph.type(v).shape ||
              std::find(taken.begin(), taken.end(), u) != taken.end())
            continue;
          taken.push_back(u);
          block_of[v] = block_of[u];
          arena.extend(block_of[v], until);
          ++plan.in_place;
          placed = true;
          break;
        }
      }
      if (!placed) block_of[v] = arena.allocate(size, until);
      plan.offset[v] = arena.offset(block_of[v]);
    }
  }
  plan.arena_bytes = arena.peak();
  return plan;
}

}  // namespace graft::codegen
