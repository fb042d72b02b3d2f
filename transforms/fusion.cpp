// jit's fusion pass; see fusion.h for what fuses and the complexity.
//
// State while walking the nodes in order. Each node starts as its own unit;
// union-find merges units into groups. Per unit root:
//   slot     a number such that ordering the units processed so far by slot
//            is a topological order of the graph with every group contracted
//            to one node (the invariant that makes every merge cycle-free);
//   mincons  a lower bound on the slots of the units that read it so far.
// A node joining groups C1..Ck gets slot s = max(slot(Ci), just above the
// slots of the units its other operands come from); the merge keeps the
// invariant when s < min mincons(Ci). Slots only grow in this quick path, so
// a stored mincons stays a lower bound. When the quick test fails the merge
// may still be fine (the group's earlier readers do not lead to the joining
// node); a topological sort of the contracted graph with the merge applied
// decides, and on success renumbers every slot from that order.
#include "transforms/fusion.h"
#include "ir/attr_access.h"
#include "ir/dtype.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <iterator>
#include <limits>
#include <unordered_map>
#include <utility>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/topological_sort.hpp>

#include "ir/bgl.h"
#include "ir/builder.h"

namespace graft::transforms {
namespace {

using ir::Op;
using ir::ValueId;

constexpr double kInf = std::numeric_limits<double>::infinity();

using ir::is_reduction;  // from ops.def

// How a node takes part: never fused, copied into bodies (a scalar
// constant, or a broadcast of one), or a member of a group of one iteration
// space.
enum class Kind : uint8_t { plain, constant, elementwise, layout, reduction };

Kind kind_of(const ir::Graph& g, const ir::Node& n) {
  // A fused kernel's constants are parameters of at most 8 bytes (a c128 is 16).
  if (n.op == Op::constant)
    return g.type(n.outputs[0]).num_elements() == 1 && ir::dtype_size(g.type(n.outputs[0]).dtype) <= 8 ? Kind::constant
                                                                                                       : Kind::plain;
  // Complex sums add the real and imaginary parts as two float sums (the reduce
  // kernel's view), which a fused reduction does not.
  if (is_reduction(n.op) && ir::is_complex(g.type(n.inputs[0]).dtype)) return Kind::plain;
  // On complex values the transcendental functions (ops.def's VECTOR_MATH ops)
  // are calls of the C library's, which generated code makes slower than the
  // interpreter's kernel (codegen/cpu/elementwise.cpp): the arithmetic around
  // them fuses, they do not.
  if (ir::op_info(n.op).kernel == ir::KernelKind::vector_math && !n.inputs.empty() &&
      ir::is_complex(g.type(n.inputs[0]).dtype))
    return Kind::plain;
  if (ir::op_info(n.op).family == ir::OpFamily::elementwise) return Kind::elementwise;
  if (n.op == Op::broadcast_in_dim || n.op == Op::reshape) return Kind::layout;
  if (is_reduction(n.op)) return Kind::reduction;
  return Kind::plain;
}

using Contracted = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;

class Fuser {
 public:
  // g must be well formed and in topological order (fuse sorts it first when not).
  Fuser(const ir::Graph& g, const std::vector<bool>& donated) : g_(g) {
    const size_t n = g.nodes().size();
    producer_.assign(static_cast<size_t>(g.value_id_bound()), -1);
    for (size_t i = 0; i < n; ++i)
      for (ValueId v : g.nodes()[i].outputs) producer_[v] = static_cast<int32_t>(i);
    kind_.resize(n);
    space_.assign(n, 0);
    parent_.resize(n);
    size_.assign(n, 1);
    slot_.assign(n, 0);
    mincons_.assign(n, kInf);
    group_.assign(n, false);
    signature_.assign(n, -1);
    reductions_.resize(n);
    for (size_t i = 0; i < n; ++i) {
      const ir::Node& node = g.nodes()[i];
      kind_[i] = kind_of(g, node);
      if (kind_[i] == Kind::elementwise || kind_[i] == Kind::layout)
        space_[i] = g.type(node.outputs[0]).num_elements();
      else if (kind_[i] == Kind::reduction)
        space_[i] = g.type(node.inputs[0]).num_elements();
      // An empty iteration space has nothing to fuse.
      if (space_[i] == 0 && kind_[i] != Kind::plain && kind_[i] != Kind::constant) kind_[i] = Kind::plain;
    }
    // A broadcast scalar constant is copied into every body that reads it, as
    // the scalar is. CSE makes one node of the 0.5 in two fusions a matmul
    // apart; as a member of the first, its full-size broadcast became that
    // kernel's output, written once and read back by the second.
    for (size_t i = 0; i < n; ++i) {
      const ir::Node& node = g.nodes()[i];
      if (node.op != Op::broadcast_in_dim || kind_[i] != Kind::layout) continue;
      const int64_t p = producer(node.inputs[0]);
      if (p >= 0 && kind_[p] == Kind::constant) kind_[i] = Kind::constant;
    }
    // Elementwise nodes that may write a graph output over a donated input stay plain.
    std::vector<bool> is_output(g.value_id_bound(), false), is_donated(g.value_id_bound(), false);
    for (ValueId v : g.outputs()) is_output[v] = true;
    for (size_t k = 0; k < donated.size() && k < g.inputs().size(); ++k) is_donated[g.inputs()[k]] = donated[k];
    for (size_t i = 0; i < n; ++i) {
      const ir::Node& node = g.nodes()[i];
      if (kind_[i] != Kind::elementwise || !is_output[node.outputs[0]]) continue;
      for (ValueId v : node.inputs)
        if (is_donated[v] && g.type(v).shape == g.type(node.outputs[0]).shape) kind_[i] = Kind::plain;
    }
  }

  ir::GraphPtr run(FusionStats* stats) {
    for (size_t i = 0; i < g_.nodes().size(); ++i) place(static_cast<int32_t>(i));
    ir::GraphPtr out = rebuild();
    if (stats) *stats = stats_;
    return out;
  }

 private:
  // ---- union-find over node indices
  int32_t find(int32_t i) {
    while (parent_[i] != i) {
      parent_[i] = parent_[parent_[i]];
      i = parent_[i];
    }
    return i;
  }

  int64_t producer(ValueId v) const { return producer_[v]; }

  // The nodes that read node q's outputs (a multi-edge per use), built on
  // first need: only the exact cycle check asks.
  const std::vector<int32_t>& consumers(int32_t q) {
    if (consumers_.empty()) {
      consumers_.resize(g_.nodes().size());
      for (size_t j = 0; j < g_.nodes().size(); ++j)
        for (ValueId v : g_.nodes()[j].inputs)
          if (int32_t p = producer_[v]; p >= 0) consumers_[p].push_back(static_cast<int32_t>(j));
    }
    return consumers_[q];
  }

  bool fusible(int32_t i) const {
    return kind_[i] == Kind::elementwise || kind_[i] == Kind::layout || kind_[i] == Kind::reduction;
  }

  // Two reductions may share a kernel when they reduce one shape over the same axes.
  bool same_signature(int32_t a, int32_t b) const {
    const ir::Node& x = g_.nodes()[a];
    const ir::Node& y = g_.nodes()[b];
    return g_.type(x.inputs[0]).shape == g_.type(y.inputs[0]).shape && ir::ints_attr(x, "axes") == ir::ints_attr(y, "axes");
  }

  static bool contains(const std::vector<int32_t>& v, int32_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

  // ---- one node, in topological order
  void place(int32_t i) {
    parent_[i] = i;
    slot_[i] = static_cast<double>(i);
    group_[i] = fusible(i);
    if (kind_[i] == Kind::reduction) {
      signature_[i] = i;
      reductions_[i].push_back(i);
    }
    if (group_[i]) join_operand_groups(i);
    // The units i reads now have a reader at i's slot.
    const int32_t me = find(i);
    for (ValueId v : g_.nodes()[i].inputs) {
      int64_t p = producer(v);
      if (p < 0 || kind_[p] == Kind::constant) continue;
      int32_t r = find(static_cast<int32_t>(p));
      if (r != me) mincons_[r] = std::min(mincons_[r], slot_[me]);
    }
  }

  void join_operand_groups(int32_t i) {
    const ir::Node& n = g_.nodes()[i];
    // A group whose reduction result i reads cannot take i: a reduction ends its kernel.
    // (Member scratch: this runs once per fusible node and would allocate each time.)
    std::vector<int32_t>& forbidden = forbidden_;
    std::vector<int32_t>& candidates = candidates_;
    forbidden.clear();
    candidates.clear();
    for (ValueId v : n.inputs) {
      int64_t p = producer(v);
      if (p >= 0 && kind_[p] == Kind::reduction) forbidden.push_back(find(static_cast<int32_t>(p)));
    }
    for (ValueId v : n.inputs) {
      int64_t p = producer(v);
      if (p < 0 || kind_[p] == Kind::constant) continue;
      int32_t r = find(static_cast<int32_t>(p));
      if (!group_[r] || space_[r] != space_[i] || contains(forbidden, r) || contains(candidates, r)) continue;
      candidates.push_back(r);
    }
    if (candidates.empty()) return;
    std::vector<int32_t>& chosen = chosen_;
    chosen.clear();
    int32_t signature = signature_[i];
    bool exact_used = false;
    double slot = slot_[i];
    for (int32_t r : candidates) {
      if (signature >= 0 && signature_[r] >= 0 && !same_signature(signature, signature_[r])) continue;
      std::vector<int32_t>& trial = trial_;
      trial.assign(chosen.begin(), chosen.end());
      trial.push_back(r);
      double s = 0;
      bool ok = quick_test(i, trial, &s);
      if (!ok && stats_.reachability_checks < kMaxExactChecks) {
        ++stats_.reachability_checks;
        ok = !reduction_read_inside(i, trial) && contracted_order(i, trial, nullptr);
        if (ok) exact_used = true;
      }
      if (!ok) {
        ++stats_.merges_refused;
        continue;
      }
      chosen.swap(trial);
      slot = s;
      if (signature < 0) signature = signature_[r];
    }
    if (chosen.empty()) return;

    // Merge i and the chosen groups into one unit.
    double mincons = kInf;
    std::vector<int32_t> reductions = std::move(reductions_[i]);
    int32_t root = i;
    for (int32_t r : chosen) {
      mincons = std::min(mincons, mincons_[r]);
      reductions.insert(reductions.end(), reductions_[r].begin(), reductions_[r].end());
      reductions_[r].clear();
      if (size_[r] > size_[root]) std::swap(r, root);
      parent_[r] = root;
      size_[root] += size_[r];
    }
    reductions_[i].clear();
    group_[root] = true;
    space_[root] = space_[i];
    signature_[root] = signature;
    reductions_[root] = std::move(reductions);
    mincons_[root] = mincons;
    slot_[root] = slot;
    if (exact_used) renumber(i);
  }

  // The quick sufficient test: the merged unit can take a slot after every
  // unit it reads and before every unit that already reads one of its parts.
  bool quick_test(int32_t i, const std::vector<int32_t>& trial, double* slot) {
    double lower = -kInf, upper = kInf;
    for (int32_t r : trial) {
      lower = std::max(lower, slot_[r]);
      upper = std::min(upper, mincons_[r]);
    }
    double after = -kInf;
    for (ValueId v : g_.nodes()[i].inputs) {
      int64_t p = producer(v);
      if (p < 0 || kind_[p] == Kind::constant) continue;
      int32_t r = find(static_cast<int32_t>(p));
      if (!contains(trial, r)) after = std::max(after, slot_[r]);
    }
    double s = after == -kInf || after < lower ? lower : std::nextafter(after, kInf);
    *slot = s;
    return s < upper;
  }

  // Whether a member of one trial group reads a reduction result of another
  // (which would put a reduction's consumer inside its own kernel).
  bool reduction_read_inside(int32_t i, const std::vector<int32_t>& trial) {
    for (int32_t r : trial)
      for (int32_t q : reductions_[r])
        for (int32_t j : consumers(q)) {
          if (j > i) continue;  // not placed yet
          if (j == i || contains(trial, find(j))) return true;
        }
    return false;
  }

  // The graph of the units placed so far (nodes 0..i), with the trial groups
  // and i contracted into one vertex when given. Returns false when it has a
  // cycle; otherwise, when `slots` is given, fills each root's position in a
  // topological order.
  bool contracted_order(int32_t i, const std::vector<int32_t>& trial, std::vector<double>* slots) {
    const size_t count = static_cast<size_t>(i) + 1;
    std::vector<int32_t> vertex_of(count, -1);
    std::vector<int32_t> root_of_vertex;
    auto vertex = [&](int32_t j) {
      int32_t r = find(j);
      if (r == i || contains(trial, r)) r = i;
      if (vertex_of[r] < 0) {
        vertex_of[r] = static_cast<int32_t>(root_of_vertex.size());
        root_of_vertex.push_back(r);
      }
      return vertex_of[r];
    };
    std::vector<std::pair<int32_t, int32_t>> edges;
    for (int32_t j = 0; j <= i; ++j) {
      int32_t b = vertex(j);
      for (ValueId v : g_.nodes()[j].inputs) {
        int64_t p = producer(v);
        if (p < 0 || kind_[p] == Kind::constant) continue;
        int32_t a = vertex(static_cast<int32_t>(p));
        if (a != b) edges.emplace_back(a, b);
      }
    }
    Contracted cg(edges.begin(), edges.end(), root_of_vertex.size());
    std::vector<size_t> order;  // reverse topological
    try {
      boost::topological_sort(cg, std::back_inserter(order));
    } catch (const boost::not_a_dag&) {
      return false;
    }
    if (slots) {
      slots->assign(count, 0);
      for (size_t k = 0; k < order.size(); ++k)
        (*slots)[root_of_vertex[order[k]]] = static_cast<double>(order.size() - 1 - k);
    }
    return true;
  }

  // After a merge the quick test could not prove: slots from a fresh
  // topological order of the contracted graph, and exact mincons.
  void renumber(int32_t i) {
    std::vector<double> slots;
    contracted_order(i, {}, &slots);  // acyclic: the check before the merge said so
    for (int32_t j = 0; j <= i; ++j)
      if (find(j) == j) {
        slot_[j] = slots[j];
        mincons_[j] = kInf;
      }
    for (int32_t j = 0; j <= i; ++j) {
      int32_t b = find(j);
      for (ValueId v : g_.nodes()[j].inputs) {
        int64_t p = producer(v);
        if (p < 0 || kind_[p] == Kind::constant) continue;
        int32_t a = find(static_cast<int32_t>(p));
        if (a != b) mincons_[a] = std::min(mincons_[a], slot_[b]);
      }
    }
  }

  // ---- the fused graph
  ir::GraphPtr rebuild() {
    const auto& nodes = g_.nodes();
    const int32_t n = static_cast<int32_t>(nodes.size());
    std::vector<std::vector<int32_t>> members(n);
    std::vector<int32_t> roots;
    for (int32_t j = 0; j < n; ++j) {
      int32_t r = find(j);
      if (members[r].empty()) roots.push_back(r);
      members[r].push_back(j);
    }
    // Slot order is a topological order of the contracted graph.
    std::stable_sort(roots.begin(), roots.end(), [&](int32_t a, int32_t b) {
      if (slot_[a] != slot_[b]) return slot_[a] < slot_[b];
      return members[a].front() < members[b].front();
    });
    // Values read outside the unit that makes them (or returned by the graph).
    std::vector<bool> outside(g_.value_id_bound(), false);
    for (int32_t j = 0; j < n; ++j)
      for (ValueId v : nodes[j].inputs) {
        int64_t p = producer(v);
        if (p >= 0 && find(static_cast<int32_t>(p)) != find(j)) outside[v] = true;
      }
    for (ValueId v : g_.outputs()) outside[v] = true;

    map_.assign(g_.value_id_bound(), -1);
    b_.reserve(g_.nodes().size());
    for (ValueId v : g_.inputs()) map_[v] = b_.input(g_.type(v));
    // Scalar constants, then their broadcasts, first: slots ignore their edges (they are copied into bodies), so a
    // plain node reading one may sort before it.
    for (bool broadcasts : {false, true})
      for (int32_t j = 0; j < n; ++j)
        if (kind_[j] == Kind::constant && (nodes[j].op == Op::broadcast_in_dim) == broadcasts) emit_plain(nodes[j]);
    for (int32_t r : roots) {
      if (kind_[r] == Kind::constant) continue;
      if (group_[r] && (members[r].size() >= 2 || reads_copied_broadcast(nodes[r]))) {
        emit_fusion(r, members[r], outside);
      } else {
        for (int32_t j : members[r]) emit_plain(nodes[j]);
      }
    }
    std::vector<ValueId> outs;
    for (ValueId v : g_.outputs()) outs.push_back(map_[v]);
    // Built in slot order, which is topological: the builder refuses a use before its definition.
    return std::make_shared<const ir::Graph>(ir::dead_code_elimination(b_.finish_graph(std::move(outs))));
  }

  // Whether the node reads a broadcast scalar constant: alone it still makes
  // a kernel, so the broadcast is copied in rather than written out in full.
  bool reads_copied_broadcast(const ir::Node& node) const {
    for (ValueId v : node.inputs) {
      const int64_t p = producer(v);
      if (p >= 0 && kind_[p] == Kind::constant && g_.nodes()[p].op == Op::broadcast_in_dim) return true;
    }
    return false;
  }

  void emit_plain(const ir::Node& node) {
    ir::IdList ins;
    ins.reserve(node.inputs.size());
    for (ValueId v : node.inputs) ins.push_back(map_[v]);
    ir::IdList outs = b_.add(node.op, std::move(ins), node.attrs, node.loc, node.scope);
    for (size_t k = 0; k < outs.size(); ++k) map_[node.outputs[k]] = outs[k];
  }

  void emit_fusion(int32_t root, const std::vector<int32_t>& members, const std::vector<bool>& outside) {
    const auto& nodes = g_.nodes();
    auto inside = [&](ValueId v) {
      int64_t p = producer(v);
      return p >= 0 && find(static_cast<int32_t>(p)) == root;
    };
    auto duplicable = [&](ValueId v) {
      int64_t p = producer(v);
      return p >= 0 && kind_[p] == Kind::constant;
    };
    // Operands in order of first use.
    std::vector<ValueId> operands;
    std::unordered_map<ValueId, ValueId> body_of;
    for (int32_t j : members)
      for (ValueId v : nodes[j].inputs)
        if (!inside(v) && !duplicable(v) && !body_of.count(v)) {
          operands.push_back(v);
          body_of[v] = -1;
        }
    ir::GraphBuilder body;
    for (ValueId v : operands) body_of[v] = body.input(g_.type(v));
    int64_t duplicated = 0;
    // A scalar constant or its broadcast, copied into the body (once).
    std::function<ValueId(ValueId)> copy = [&](ValueId v) {
      auto it = body_of.find(v);
      if (it != body_of.end()) return it->second;
      const ir::Node& c = nodes[static_cast<size_t>(producer(v))];
      ir::IdList ins;
      for (ValueId u : c.inputs) ins.push_back(copy(u));
      if (c.op == Op::constant) ++duplicated;
      return body_of.emplace(v, body.add1(c.op, std::move(ins), c.attrs, c.loc, c.scope)).first->second;
    };
    for (int32_t j : members) {
      const ir::Node& node = nodes[j];
      ir::IdList ins;
      for (ValueId v : node.inputs) ins.push_back(copy(v));
      ir::IdList outs = body.add(node.op, std::move(ins), node.attrs, node.loc, node.scope);
      for (size_t k = 0; k < outs.size(); ++k) body_of[node.outputs[k]] = outs[k];
    }
    std::vector<ValueId> body_outputs, results;
    for (int32_t j : members)
      for (ValueId v : nodes[j].outputs)
        if (outside[v]) {
          body_outputs.push_back(body_of.at(v));
          results.push_back(v);
        }
    if (results.empty()) return;  // nothing reads the group
    ir::GraphPtr fused = body.finish(std::move(body_outputs));
    std::vector<ValueId> ins;
    for (ValueId v : operands) ins.push_back(map_[v]);
    const ir::Node& last = nodes[members.back()];
    std::vector<ValueId> outs = b_.add(Op::fusion, std::move(ins), {{"body", ir::Graphs{fused}}}, last.loc, last.scope);
    for (size_t k = 0; k < outs.size(); ++k) map_[results[k]] = outs[k];
    ++stats_.kernels;
    stats_.ops_fused += static_cast<int64_t>(members.size());
    stats_.constants_duplicated += duplicated;
  }

  const ir::Graph& g_;
  std::vector<int32_t> forbidden_, candidates_, chosen_, trial_;  // join_operand_groups' scratch
  std::vector<int32_t> producer_;                // by value: the node defining it, or -1 (an input)
  std::vector<std::vector<int32_t>> consumers_;  // by node, see consumers()
  std::vector<Kind> kind_;
  std::vector<int64_t> space_;     // per node, then per root: the iteration space
  std::vector<int32_t> parent_, size_;
  std::vector<double> slot_, mincons_;  // per root
  std::vector<bool> group_;             // per root: a fusible group
  std::vector<int32_t> signature_;      // per root: a reduction fixing the group's reduced shape and axes, or -1
  std::vector<std::vector<int32_t>> reductions_;  // per root: its reduction nodes
  FusionStats stats_;
  // The input went through CSE already; what it still holds twice is kept
  // apart on purpose (a checkpoint's recomputation, see inline_remat.h).
  ir::GraphBuilder b_{ir::GraphBuilder::Sharing::none};
  std::vector<ValueId> map_;
};

}  // namespace

bool fusible_op(Op op) {
  return op == Op::constant || ir::op_info(op).family == ir::OpFamily::elementwise || op == Op::broadcast_in_dim ||
         op == Op::reshape || is_reduction(op);
}

ir::GraphPtr fuse(const ir::Graph& g, FusionStats* stats, const std::vector<bool>& donated) {
  if (ir::in_topological_order(g)) return Fuser(g, donated).run(stats);
  ir::Graph sorted = g;
  ir::topo_sort(sorted);  // names a cycle or an undefined value
  return Fuser(sorted, donated).run(stats);
}

}  // namespace graft::transforms
