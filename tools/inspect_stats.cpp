// graft-inspect stats: what a graph holds and what jit makes of it.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "api/executable_info.h"
#include "graft/errors.h"
#include "graft/jit.h"
#include "inspect.h"
#include "ir/cost.h"
#include "ir/graph.h"
#include "ir/op.h"

namespace graft::inspect {
namespace {

// Counts ops, those inside subgraphs (control-flow bodies, custom rules) apart.
void count_ops(const ir::Graph& g, bool inside, std::map<std::string, std::pair<int64_t, int64_t>>& counts) {
  for (const ir::Node& n : g.nodes()) {
    auto& c = counts[std::string(ir::op_name(n.op))];
    (inside ? c.second : c.first) += 1;
    for (const auto& [name, value] : n.attrs.items())
      if (const ir::Graphs* gs = std::get_if<ir::Graphs>(&value))
        for (const ir::GraphPtr& sub : *gs)
          if (sub) count_ops(*sub, true, counts);
  }
}

std::string bytes_text(int64_t b) {
  char buf[64];
  if (b >= (int64_t{1} << 20)) std::snprintf(buf, sizeof buf, "%lld (%.1f MiB)", static_cast<long long>(b), b / 1048576.0);
  else if (b >= 1024) std::snprintf(buf, sizeof buf, "%lld (%.1f KiB)", static_cast<long long>(b), b / 1024.0);
  else std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(b));
  return buf;
}

}  // namespace

namespace {

std::string count_text(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f", x);
  return buf;
}

bool is_backward(const std::string& scope) { return scope == "backward" || scope.rfind("backward/", 0) == 0; }

// Flops and bytes of the graph as traced: each node's own, control-flow
// bodies as often as they run; forward and backward apart.
void print_traced_cost(const ir::Graph& ir, std::ostream& out, bool by_scope) {
  ir::Cost total, backward;
  for (const ir::Node& n : ir.nodes()) {
    const ir::Cost c = ir::node_cost(ir, n);
    total += c;
    if (is_backward(n.scope)) backward += c;
  }
  out << "\nas traced (control-flow bodies counted as often as they run):\n  flops: " << count_text(total.flops);
  if (backward.flops > 0 || backward.bytes > 0)
    out << " (forward " << count_text(total.flops - backward.flops) << ", backward " << count_text(backward.flops)
        << ")";
  out << "\n  bytes accessed: " << bytes_text(static_cast<int64_t>(total.bytes));
  if (backward.flops > 0 || backward.bytes > 0)
    out << " (forward " << bytes_text(static_cast<int64_t>(total.bytes - backward.bytes)) << ", backward "
        << bytes_text(static_cast<int64_t>(backward.bytes)) << ")";
  out << "\n";
  if (total.per_trip) out << "  (a while loop's body is counted once: its trip count is known only when it runs)\n";
  if (!by_scope) return;
  out << "\nby scope (subscopes included):\n";
  char line[256];
  std::snprintf(line, sizeof line, "  %-40s %8s %14s %14s\n", "scope", "nodes", "flops", "bytes");
  out << line;
  for (const auto& [scope, t] : scope_totals(ir)) {
    const size_t depth = static_cast<size_t>(std::count(scope.begin(), scope.end(), '/'));
    const std::string name = std::string(2 * depth, ' ') +
                             scope.substr(scope.rfind('/') == std::string::npos ? 0 : scope.rfind('/') + 1) +
                             (t.per_trip ? " (per trip)" : "");
    std::snprintf(line, sizeof line, "  %-40s %8lld %14s %14s\n", name.c_str(), static_cast<long long>(t.nodes),
                  count_text(t.flops).c_str(), count_text(t.bytes).c_str());
    out << line;
  }
}

}  // namespace

void print_stats(const Graph& g, std::ostream& out, bool by_scope) {
  const ir::Graph& ir = g.ir();
  out << "inputs: " << ir.inputs().size() << ", outputs: " << ir.outputs().size() << ", nodes: " << ir.num_nodes()
      << "\n\nops (top level / in subgraphs):\n";
  std::map<std::string, std::pair<int64_t, int64_t>> counts;
  count_ops(ir, false, counts);
  std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> sorted(counts.begin(), counts.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& x, const auto& y) {
    return x.second.first + x.second.second > y.second.first + y.second.second;
  });
  for (const auto& [op, c] : sorted) {
    char line[128];
    std::snprintf(line, sizeof line, "  %-24s %6lld %6lld\n", op.c_str(), static_cast<long long>(c.first),
                  static_cast<long long>(c.second));
    out << line;
  }
  print_traced_cost(ir, out, by_scope);
  // What jit makes of it, on each backend.
  for (Backend backend : {Backend::interpreter, Backend::cpu}) {
    const char* name = backend == Backend::cpu ? "cpu" : "interpreter";
    out << "\njit, backend " << name << ":\n";
    try {
      const JitOptions options{.backend = backend, .wait_for_compile = true};
      auto exe = detail::compile_graph(g, options, std::vector<bool>(ir.inputs().size(), false));
      const detail::ExecutableInfo info = detail::executable_info(*exe);
      const CostAnalysis cost = detail::executable_cost(*exe);
      const MemoryAnalysis mem = detail::executable_memory(*exe);
      out << "  nodes: " << info.nodes << " (from " << info.traced_nodes << ")\n";
      out << "  fused kernels: " << info.fusion_kernels << " (" << info.fused_ops << " ops)";
      if (backend == Backend::cpu)
        out << ", " << info.compiled_kernels << " compiled to C++ (" << info.distinct_kernels << " distinct)";
      out << "\n  flops: " << static_cast<long long>(cost.flops)
          << "\n  bytes accessed: " << bytes_text(static_cast<int64_t>(cost.bytes_accessed))
          << "\n  memory: arguments " << bytes_text(mem.argument_bytes) << ", outputs " << bytes_text(mem.output_bytes)
          << ", temporaries at their peak " << bytes_text(mem.temp_bytes) << "\n  peak (arguments + outputs + "
          << "temporaries): " << bytes_text(mem.argument_bytes + mem.output_bytes + mem.temp_bytes) << "\n";
    } catch (const Error& e) {
      out << "  cannot compile: " << e.what() << "\n";
    }
  }
}

}  // namespace graft::inspect
