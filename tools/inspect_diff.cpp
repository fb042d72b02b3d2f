// graft-inspect diff: two graphs compared node by node. Nodes are matched by
// what they compute, not by their ids: walking b in order, a node matches
// the unmatched node of a with the same op reading the matched operands
// (graph inputs match by position). Equal attributes and output types: the
// same node; other ones: changed (and its results still match, so what reads
// them is not reported too); no such node in a: added. Nodes of a left
// unmatched were removed.
#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "inspect.h"
#include "ir/graph.h"
#include "ir/text.h"

namespace graft::inspect {
namespace {

std::string line_of(const ir::Graph& g, const ir::Node& n) {
  const std::string text = ir::node_text(g, n);
  return text.substr(0, text.find('\n'));  // the node's own line; its subgraphs are summarised by their attributes
}

bool same_types(const ir::Graph& ga, const ir::Node& a, const ir::Graph& gb, const ir::Node& b) {
  if (a.outputs.size() != b.outputs.size()) return false;
  for (size_t i = 0; i < a.outputs.size(); ++i)
    if (!(ga.type(a.outputs[i]) == gb.type(b.outputs[i]))) return false;
  return true;
}

}  // namespace

int print_diff(const Graph& a, const Graph& b, std::ostream& out) {
  const ir::Graph &ga = a.ir(), &gb = b.ir();
  int differences = 0;
  // b's values named by the a values they match; -1 - k for the k-th new one.
  std::unordered_map<ir::ValueId, int64_t> as_a;
  int64_t fresh = 0;
  for (size_t i = 0; i < gb.inputs().size(); ++i)
    as_a[gb.inputs()[i]] = i < ga.inputs().size() ? ga.inputs()[i] : -1 - fresh++;
  if (ga.input_types() != gb.input_types()) {
    out << "inputs: " << ga.inputs().size() << " -> " << gb.inputs().size() << " (or their types differ)\n";
    ++differences;
  }
  // a's nodes by (op, operands), unmatched ones first in line.
  std::map<std::pair<int, std::vector<int64_t>>, std::vector<size_t>> by_operands;
  for (size_t i = 0; i < ga.nodes().size(); ++i) {
    const ir::Node& n = ga.nodes()[i];
    by_operands[{static_cast<int>(n.op), std::vector<int64_t>(n.inputs.begin(), n.inputs.end())}].push_back(i);
  }
  std::vector<bool> matched(ga.nodes().size(), false);
  for (const ir::Node& n : gb.nodes()) {
    std::vector<int64_t> operands;
    for (ir::ValueId v : n.inputs) operands.push_back(as_a.count(v) ? as_a[v] : -1 - fresh++);
    const ir::Node* match = nullptr;
    auto it = by_operands.find({static_cast<int>(n.op), operands});
    if (it != by_operands.end()) {
      // The same node if one is equal; else the first candidate, changed.
      for (size_t i : it->second)
        if (!matched[i] && ga.nodes()[i].attrs == n.attrs && same_types(ga, ga.nodes()[i], gb, n)) {
          match = &ga.nodes()[i];
          matched[i] = true;
          break;
        }
      for (size_t i : it->second)
        if (!match && !matched[i] && ga.nodes()[i].outputs.size() == n.outputs.size()) {
          match = &ga.nodes()[i];
          matched[i] = true;
          out << "changed:\n  - " << line_of(ga, *match) << "\n  + " << line_of(gb, n) << "\n";
          ++differences;
        }
    }
    if (match) {
      for (size_t o = 0; o < n.outputs.size(); ++o) as_a[n.outputs[o]] = match->outputs[o];
    } else {
      for (ir::ValueId v : n.outputs) as_a[v] = -1 - fresh++;
      out << "added:   " << line_of(gb, n) << "\n";
      ++differences;
    }
  }
  for (size_t i = 0; i < ga.nodes().size(); ++i)
    if (!matched[i]) {
      out << "removed: " << line_of(ga, ga.nodes()[i]) << "\n";
      ++differences;
    }
  std::vector<int64_t> outs_b;
  for (ir::ValueId v : gb.outputs()) outs_b.push_back(as_a.count(v) ? as_a[v] : -1);
  if (outs_b != std::vector<int64_t>(ga.outputs().begin(), ga.outputs().end())) {
    out << "outputs: (";
    for (size_t i = 0; i < ga.outputs().size(); ++i) out << (i ? ", %" : "%") << ga.outputs()[i];
    out << ") -> (";
    for (size_t i = 0; i < gb.outputs().size(); ++i) out << (i ? ", %" : "%") << gb.outputs()[i];
    out << ")\n";
    ++differences;
  }
  out << (differences ? std::to_string(differences) + (differences == 1 ? " difference" : " differences")
                      : std::string("no differences"))
      << " (" << ga.num_nodes() << " nodes -> " << gb.num_nodes() << ")\n";
  return differences;
}

}  // namespace graft::inspect
