// graft-inspect diff: what changed between two graphs, as a person would say
// it. Inputs and outputs are matched by name (by position where a graph has
// no names). Nodes are matched walking b in order, each to an unmatched node
// of a:
//   1. the same op reading the matched operands, with equal attributes and
//      types: the same node (constants: the same value, in the same scope
//      first);
//   2. the same op and operands in the same scope, other attributes or
//      types: changed;
//   3. downstream of a change (an operand is new, or its type changed): the
//      same op, scope and attributes, the most operands in common: the same
//      node, rewired or retyped by the change upstream, which is not
//      reported again;
//   4. otherwise: added. Nodes of a left unmatched were removed.
// A node that differs only in its result types because an operand's type
// changed (a batch size flowing down) is counted, not listed.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "inspect.h"
#include "ir/graph.h"
#include "ir/text.h"

namespace graft::inspect {
namespace {

// A node's own line (its subgraphs summarised by their attributes) with its
// scope and the user's line.
std::string line_of(const ir::Graph& g, const ir::Node& n) {
  std::string text = ir::node_text(g, n);
  text = text.substr(0, text.find('\n'));
  if (!n.loc.empty()) {
    std::string where = ir::loc_str(n.loc);
    where = where.substr(where.rfind('/') == std::string::npos ? 0 : where.rfind('/') + 1);
    text += (n.scope.empty() ? "  # " : "  ") + where;
  }
  return text;
}

bool same_types(const ir::Graph& ga, const ir::Node& a, const ir::Graph& gb, const ir::Node& b) {
  if (a.outputs.size() != b.outputs.size()) return false;
  for (size_t i = 0; i < a.outputs.size(); ++i)
    if (!(ga.type(a.outputs[i]) == gb.type(b.outputs[i]))) return false;
  return true;
}

// The name of input (output) i: its pytree path, or its position.
std::string end_name(const std::vector<std::string>& names, size_t i, const char* what) {
  return names.empty() ? std::string(what) + " " + std::to_string(i) : names[i];
}

// Matches the ends (inputs or outputs) of b to those of a: by name when both have names, else by position.
std::vector<int64_t> match_ends(const std::vector<std::string>& a_names, size_t a_count,
                                const std::vector<std::string>& b_names, size_t b_count) {
  std::vector<int64_t> match(b_count, -1);
  if (!a_names.empty() && !b_names.empty()) {
    std::map<std::string, int64_t> by_name;
    for (size_t i = 0; i < a_count; ++i) by_name.emplace(a_names[i], static_cast<int64_t>(i));
    for (size_t j = 0; j < b_count; ++j)
      if (auto it = by_name.find(b_names[j]); it != by_name.end()) match[j] = it->second;
  } else {
    for (size_t j = 0; j < b_count && j < a_count; ++j) match[j] = static_cast<int64_t>(j);
  }
  return match;
}

class Differ {
 public:
  Differ(const ir::Graph& a, const ir::Graph& b, std::ostream& out) : ga_(a), gb_(b), out_(out) {}
  int run();

 private:
  void match_inputs();
  void match_node(const ir::Node& n);
  void report(const std::string& kind, const std::string& text) {
    out_ << kind << text << "\n";
    ++differences_;
  }
  void take(size_t i, const ir::Node& n) {
    matched_[i] = true;
    const ir::Node& m = ga_.nodes()[i];
    for (size_t o = 0; o < n.outputs.size(); ++o) {
      as_a_[n.outputs[o]] = m.outputs[o];
      if (!(gb_.type(n.outputs[o]) == ga_.type(m.outputs[o]))) retyped_.insert(n.outputs[o]);
    }
  }

  const ir::Graph &ga_, &gb_;
  std::ostream& out_;
  int differences_ = 0;
  int64_t retyped_nodes_ = 0, rewired_nodes_ = 0;
  std::unordered_map<ir::ValueId, int64_t> as_a_;  // b's values as a's; negative: new in b
  std::unordered_set<ir::ValueId> retyped_;        // b's values whose type differs from their match's
  std::vector<bool> matched_;
  int64_t fresh_ = 0;
  std::map<std::pair<int, std::vector<int64_t>>, std::vector<size_t>> by_operands_;  // a's nodes by (op, operands)
  std::map<std::pair<int, std::string>, std::vector<size_t>> by_scope_;              // a's nodes by (op, scope)
};

void Differ::match_inputs() {
  const std::vector<int64_t> match =
      match_ends(ga_.input_names(), ga_.inputs().size(), gb_.input_names(), gb_.inputs().size());
  std::vector<bool> used(ga_.inputs().size(), false);
  for (size_t j = 0; j < gb_.inputs().size(); ++j) {
    const ir::ValueId v = gb_.inputs()[j];
    const std::string name = end_name(gb_.input_names(), j, "input");
    if (match[j] < 0) {
      as_a_[v] = -1 - fresh_++;
      report("added input:   ", name + ": " + ir::type_str(gb_.type(v)));
      continue;
    }
    const ir::ValueId w = ga_.inputs()[static_cast<size_t>(match[j])];
    used[static_cast<size_t>(match[j])] = true;
    as_a_[v] = w;
    if (!(ga_.type(w) == gb_.type(v))) {
      retyped_.insert(v);
      report("changed input: ", name + ": " + ir::type_str(ga_.type(w)) + " -> " + ir::type_str(gb_.type(v)));
    }
  }
  for (size_t i = 0; i < ga_.inputs().size(); ++i)
    if (!used[i])
      report("removed input: ",
             end_name(ga_.input_names(), i, "input") + ": " + ir::type_str(ga_.type(ga_.inputs()[i])));
}

void Differ::match_node(const ir::Node& n) {
  std::vector<int64_t> operands;
  bool downstream = false;  // reads a new value or one whose type changed
  for (ir::ValueId v : n.inputs) {
    auto it = as_a_.find(v);
    operands.push_back(it != as_a_.end() ? it->second : -1 - fresh_++);
    downstream = downstream || operands.back() < 0 || retyped_.count(v);
  }
  const int op = static_cast<int>(n.op);
  // 1. The same node: same op, operands, attributes and types (the same scope preferred).
  if (auto it = by_operands_.find({op, operands}); it != by_operands_.end()) {
    size_t best = SIZE_MAX;
    for (size_t i : it->second) {
      const ir::Node& m = ga_.nodes()[i];
      if (matched_[i] || !(m.attrs == n.attrs) || !same_types(ga_, m, gb_, n)) continue;
      if (best == SIZE_MAX || (m.scope == n.scope && ga_.nodes()[best].scope != n.scope)) best = i;
    }
    if (best != SIZE_MAX) return take(best, n);
    // 2. Changed: same op and operands, in the same scope.
    for (size_t i : it->second) {
      const ir::Node& m = ga_.nodes()[i];
      if (matched_[i] || m.scope != n.scope || m.outputs.size() != n.outputs.size()) continue;
      take(i, n);
      if (m.attrs == n.attrs && downstream)
        ++retyped_nodes_;  // only its types differ, because an operand's did
      else
        report("changed:\n  - ", line_of(ga_, m) + "\n  + " + line_of(gb_, n));
      return;
    }
  }
  // 3. Downstream of a change: the same op, scope and attributes; the most operands in common.
  if (downstream) {
    size_t best = SIZE_MAX;
    int best_common = -1;
    if (auto it = by_scope_.find({op, n.scope}); it != by_scope_.end())
      for (size_t i : it->second) {
        const ir::Node& m = ga_.nodes()[i];
        if (matched_[i] || !(m.attrs == n.attrs) || m.inputs.size() != n.inputs.size() ||
            m.outputs.size() != n.outputs.size())
          continue;
        int common = 0;
        for (size_t k = 0; k < m.inputs.size(); ++k) common += operands[k] == m.inputs[k];
        if (common > best_common) best = i, best_common = common;
      }
    if (best != SIZE_MAX) {
      const bool retyped = !same_types(ga_, ga_.nodes()[best], gb_, n);
      take(best, n);
      ++(retyped ? retyped_nodes_ : rewired_nodes_);
      return;
    }
  }
  // 4. Added.
  for (ir::ValueId v : n.outputs) as_a_[v] = -1 - fresh_++;
  report("added:   ", line_of(gb_, n));
}

int Differ::run() {
  matched_.assign(ga_.nodes().size(), false);
  for (size_t i = 0; i < ga_.nodes().size(); ++i) {
    const ir::Node& m = ga_.nodes()[i];
    by_operands_[{static_cast<int>(m.op), std::vector<int64_t>(m.inputs.begin(), m.inputs.end())}].push_back(i);
    by_scope_[{static_cast<int>(m.op), m.scope}].push_back(i);
  }
  match_inputs();
  for (const ir::Node& n : gb_.nodes()) match_node(n);
  for (size_t i = 0; i < ga_.nodes().size(); ++i)
    if (!matched_[i]) report("removed: ", line_of(ga_, ga_.nodes()[i]));

  // Outputs by name: added, removed, or now computed by another node.
  const std::vector<int64_t> match =
      match_ends(ga_.output_names(), ga_.outputs().size(), gb_.output_names(), gb_.outputs().size());
  std::vector<bool> used(ga_.outputs().size(), false);
  for (size_t j = 0; j < gb_.outputs().size(); ++j) {
    const ir::ValueId v = gb_.outputs()[j];
    const std::string name = end_name(gb_.output_names(), j, "output");
    if (match[j] < 0) {
      report("added output:   ", name + ": " + ir::type_str(gb_.type(v)));
      continue;
    }
    used[static_cast<size_t>(match[j])] = true;
    const ir::ValueId w = ga_.outputs()[static_cast<size_t>(match[j])];
    auto it = as_a_.find(v);
    if (it == as_a_.end() || it->second != w)
      report("changed output: ", name + ": %" + std::to_string(w) + " -> %" + std::to_string(v) +
                                     " (another value: what computes it changed)");
    else if (!(ga_.type(w) == gb_.type(v)))
      report("changed output: ", name + ": " + ir::type_str(ga_.type(w)) + " -> " + ir::type_str(gb_.type(v)));
  }
  for (size_t i = 0; i < ga_.outputs().size(); ++i)
    if (!used[i]) report("removed output: ", end_name(ga_.output_names(), i, "output"));

  out_ << (differences_ ? std::to_string(differences_) + (differences_ == 1 ? " difference" : " differences")
                        : std::string("no differences"))
       << " (" << ga_.num_nodes() << " nodes -> " << gb_.num_nodes() << ")";
  if (retyped_nodes_)
    out_ << "; " << retyped_nodes_ << (retyped_nodes_ == 1 ? " node downstream differs" : " nodes downstream differ")
         << " only in types that flow from them";
  if (rewired_nodes_)
    out_ << "; " << rewired_nodes_ << (rewired_nodes_ == 1 ? " node now reads" : " nodes now read")
         << " added or changed values";
  out_ << "\n";
  return differences_;
}

}  // namespace

int print_diff(const Graph& a, const Graph& b, std::ostream& out) { return Differ(a.ir(), b.ir(), out).run(); }

}  // namespace graft::inspect
