// graft-inspect's scopes: listing them, matching --collapse patterns against
// them, and choosing how deep a picture can expand within a node budget.
#include <fnmatch.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "graft/errors.h"
#include "inspect.h"
#include "ir/cost.h"
#include "ir/graph.h"

namespace graft::inspect {
namespace {

int depth_of(const std::string& scope) {
  return scope.empty() ? 0 : 1 + static_cast<int>(std::count(scope.begin(), scope.end(), '/'));
}

// The scope and each of its ancestors ("a/b/c", "a/b", "a").
std::vector<std::string> with_ancestors(const std::string& scope) {
  std::vector<std::string> out;
  for (std::string s = scope; !s.empty();) {
    out.push_back(s);
    const size_t slash = s.rfind('/');
    s = slash == std::string::npos ? std::string() : s.substr(0, slash);
  }
  return out;
}

// The first `levels` components of a scope path.
std::string prefix_of(const std::string& scope, int levels) {
  size_t end = 0;
  for (int i = 0; i < levels; ++i) {
    end = scope.find('/', end + (i ? 1 : 0));
    if (end == std::string::npos) return scope;
  }
  return scope.substr(0, end);
}

}  // namespace

std::map<std::string, ScopeTotals> scope_totals(const ir::Graph& g) {
  std::map<std::string, ScopeTotals> totals;
  for (const ir::Node& n : g.nodes()) {
    const ir::Cost c = ir::node_cost(g, n);
    for (const std::string& s : with_ancestors(n.scope)) {
      ScopeTotals& t = totals[s];
      ++t.nodes;
      t.flops += c.flops;
      t.bytes += c.bytes;
      t.per_trip = t.per_trip || c.per_trip;
    }
  }
  return totals;
}

void print_scopes(const Graph& g, std::ostream& out) {
  const std::map<std::string, ScopeTotals> totals = scope_totals(g.ir());
  if (totals.empty()) {
    out << "no named scopes (" << g.num_nodes() << " nodes at the top level)\n";
    return;
  }
  out << "scope (nodes inside, subscopes included)\n";
  for (const auto& [scope, t] : totals) {
    const int depth = depth_of(scope);
    const std::string name = scope.substr(scope.rfind('/') == std::string::npos ? 0 : scope.rfind('/') + 1);
    out << std::string(2 * static_cast<size_t>(depth - 1), ' ') << name << "  " << t.nodes << "\n";
  }
  int64_t top = 0;
  for (const ir::Node& n : g.ir().nodes()) top += n.scope.empty();
  out << "(" << top << " nodes outside any scope; full paths such as '" << totals.rbegin()->first
      << "' are what --collapse matches)\n";
}

std::vector<std::string> match_scopes(const ir::Graph& g, const std::vector<std::string>& patterns) {
  const std::map<std::string, ScopeTotals> totals = scope_totals(g);
  std::set<std::string> chosen;
  for (const std::string& pattern : patterns) {
    bool any = false;
    for (const auto& [scope, t] : totals)
      if (fnmatch(pattern.c_str(), scope.c_str(), FNM_PATHNAME) == 0) {
        chosen.insert(scope);
        any = true;
      }
    if (!any)
      throw Error("--collapse '" + pattern + "': no scope matches it (a pattern matches whole scope paths, '*' " +
                  "within one level, as in 'block*' or '*/attention'; `graft-inspect scopes GRAPH` lists them)");
  }
  // A scope inside another chosen one is already in its box.
  std::vector<std::string> out;
  for (const std::string& s : chosen) {
    bool inside = false;
    for (const std::string& a : with_ancestors(s)) inside = inside || (a != s && chosen.count(a));
    if (!inside) out.push_back(s);
  }
  return out;
}

BudgetChoice scopes_within_budget(const ir::Graph& g, int64_t budget) {
  // What a picture shows at each level: a box per scope at the level, the
  // nodes above it; constants, broadcasts and reshapes fold into their
  // readers, and inputs and outputs group by pytree prefix (about one each).
  auto folded = [](const ir::Node& n) {
    return n.op == ir::Op::constant || n.op == ir::Op::broadcast_in_dim || n.op == ir::Op::reshape;
  };
  int deepest = 0;
  for (const ir::Node& n : g.nodes()) deepest = std::max(deepest, depth_of(n.scope));
  const int64_t ends = std::min<int64_t>(static_cast<int64_t>(g.inputs().size() + g.outputs().size()), 64);
  BudgetChoice choice;
  for (int level = deepest; level >= 0; --level) {
    std::set<std::string> boxes;
    int64_t shown = ends;
    for (const ir::Node& n : g.nodes()) {
      if (depth_of(n.scope) > level)
        boxes.insert(prefix_of(n.scope, level + 1));
      else
        shown += !folded(n);
    }
    shown += static_cast<int64_t>(boxes.size());
    choice = BudgetChoice{level, shown, std::vector<std::string>(boxes.begin(), boxes.end())};
    if (shown <= budget) break;
  }
  return choice;
}

}  // namespace graft::inspect
