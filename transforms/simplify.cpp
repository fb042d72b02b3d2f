#include "transforms/simplify.h"
#include "ir/attr_access.h"

#include <cstring>
#include <optional>
#include <unordered_map>
#include <vector>

#include "ir/builder.h"
#include "ir/dtype.h"
#include "ir/literal.h"
#include "ir/passes.h"

namespace graft::transforms {
namespace {

using ir::Op;
using ir::ValueId;

class Simplifier {
 public:
  explicit Simplifier(const ir::Graph& g) : g_(g), map_(g.value_id_bound(), -1) {}

  ir::GraphPtr run() {
    b_.reserve(g_.nodes().size());
    for (ValueId v : g_.inputs()) map_[v] = b_.input(g_.type(v));
    for (const ir::Node& n : g_.nodes()) {
      ir::IdList ins;
      for (ValueId v : n.inputs) ins.push_back(map_[v]);
      ValueId same = n.outputs.size() == 1 ? rewrite(n, ins) : -1;
      if (same >= 0 && b_.type(same) == g_.type(n.outputs[0])) {
        map_[n.outputs[0]] = same;
        ++rewrites_;
        continue;
      }
      ir::IdList outs = b_.add(n.op, ins, n.attrs, n.loc, n.scope);
      for (size_t k = 0; k < outs.size(); ++k) map_[n.outputs[k]] = outs[k];
    }
    std::vector<ValueId> outs;
    for (ValueId v : g_.outputs()) outs.push_back(map_[v]);
    return std::make_shared<const ir::Graph>(ir::dead_code_elimination(b_.finish_graph(std::move(outs))));
  }

  int64_t rewrites() const { return rewrites_; }

 private:
  // The value every element of v holds, if v is a constant (possibly
  // broadcast) whose elements are all equal.
  std::optional<double> uniform_constant(ValueId v) {
    auto it = producers_.find(v);
    if (it == producers_.end()) return std::nullopt;
    const ir::Node& n = b_.graph().nodes()[it->second];
    if (n.op == Op::broadcast_in_dim) return uniform_constant(n.inputs[0]);
    if (n.op != Op::constant) return std::nullopt;
    const ir::Literal& lit = *ir::attr<ir::LiteralPtr>(n, "value");
    const int64_t count = lit.type.num_elements();
    if (count == 0 || ir::is_complex(lit.type.dtype)) return std::nullopt;  // one double holds no complex value
    double first = ir::literal_element(lit, 0);
    for (int64_t i = 1; i < count; ++i)
      if (ir::literal_element(lit, i) != first) return std::nullopt;
    return first;
  }

  const ir::Node* node_of(ValueId v) {
    auto it = producers_.find(v);
    return it == producers_.end() ? nullptr : &b_.graph().nodes()[it->second];
  }


  // A value of the new graph equal to n's output, or -1 to keep n. Every
  // rewrite returns an existing value of the same type (checked by the caller).
  ValueId rewrite(const ir::Node& n, const ir::IdList& in) {
    record_producers();
    switch (n.op) {
      case Op::mul:
        if (is(in[1], 1.0)) return in[0];
        if (is(in[0], 1.0)) return in[1];
        return -1;
      case Op::add:
        if (is(in[1], 0.0)) return in[0];
        if (is(in[0], 0.0)) return in[1];
        return add_disjoint_pieces(n, in[0], in[1]);
      case Op::sub:
        return is(in[1], 0.0) ? in[0] : -1;
      case Op::div:
        return is(in[1], 1.0) ? in[0] : -1;
      case Op::neg: {
        const ir::Node* p = node_of(in[0]);
        return p && p->op == Op::neg ? p->inputs[0] : -1;
      }
      case Op::convert_element_type:
      case Op::copy:
      case Op::reshape:
        // Same type in and out: nothing to do (the caller checks the type).
        return b_.type(in[0]) == g_.type(n.outputs[0]) ? in[0] : -1;
      case Op::broadcast_in_dim: {
        if (b_.type(in[0]).shape == g_.type(n.outputs[0]).shape) return in[0];
        return -1;
      }
      case Op::transpose: {
        const ir::Ints& perm = ir::ints_attr(n, "permutation");
        bool identity = true;
        for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == static_cast<int64_t>(i);
        if (identity) return in[0];
        // transpose(transpose(x, p), q) is x when the two cancel.
        const ir::Node* p = node_of(in[0]);
        if (p && p->op == Op::transpose) {
          const ir::Ints& inner = ir::ints_attr(*p, "permutation");
          bool cancels = true;
          for (size_t i = 0; i < perm.size(); ++i) cancels = cancels && inner[perm[i]] == static_cast<int64_t>(i);
          if (cancels) return p->inputs[0];
        }
        return -1;
      }
      default:
        return -1;
    }
  }

  // A value that is zero except for pieces at disjoint windows: a pad with
  // zeros (no interior or negative padding), or what add_disjoint_pieces
  // built. Its pieces, or nullopt.
  struct Piece {
    ValueId value;   // placed at `start`, with its own shape
    ir::Ints start;
  };
  std::optional<std::vector<Piece>> pieces_of(ValueId v) {
    if (auto it = sparse_.find(v); it != sparse_.end()) return it->second;
    const ir::Node* p = node_of(v);
    if (!p || p->op != Op::pad || !is(p->inputs[1], 0.0)) return std::nullopt;
    const ir::Ints &lo = ir::ints_attr(*p, "padding_low"), &hi = ir::ints_attr(*p, "padding_high"),
                   &interior = ir::ints_attr(*p, "padding_interior");
    for (size_t d = 0; d < lo.size(); ++d)
      if (lo[d] < 0 || hi[d] < 0 || interior[d] != 0) return std::nullopt;
    return std::vector<Piece>{Piece{p->inputs[0], lo}};
  }

  bool overlap(const Piece& a, const Piece& b) {
    const Shape &sa = b_.type(a.value).shape, &sb = b_.type(b.value).shape;
    for (size_t d = 0; d < a.start.size(); ++d)
      if (a.start[d] + sa[d] <= b.start[d] || b.start[d] + sb[d] <= a.start[d]) return false;
    return true;
  }

  // x + y where both are zeros but for pieces at disjoint windows (the
  // cotangents of slices of one stacked array: every slice's is a pad): the
  // pieces written into one buffer by dynamic_update_slice, in place, rather
  // than a full-size pad and add per piece (O(L^2) for L slices). Exact but
  // for the sign of a -0 piece (-0 + 0 is +0), as x+0 -> x above.
  ValueId add_disjoint_pieces(const ir::Node& n, ValueId x, ValueId y) {
    constexpr size_t kMaxPieces = 4096;  // the disjointness test is quadratic in pieces
    std::optional<std::vector<Piece>> px = pieces_of(x), py = pieces_of(y);
    if (!px || !py || px->size() + py->size() > kMaxPieces) return -1;
    for (const Piece& a : *px)
      for (const Piece& b : *py)
        if (overlap(a, b)) return -1;
    if (px->size() < py->size()) {  // write the fewer pieces into the other's buffer
      std::swap(x, y);
      std::swap(px, py);
    }
    ValueId acc = x;
    for (const Piece& b : *py) {
      ir::IdList args = {acc, b.value};
      for (int64_t st : b.start) args.push_back(index_constant(st, n));
      acc = b_.add1(Op::dynamic_update_slice, args, {}, n.loc, n.scope);
    }
    std::vector<Piece> all = *px;
    all.insert(all.end(), py->begin(), py->end());
    sparse_[acc] = std::move(all);
    return acc;
  }

  // An i32 scalar constant (the builder shares equal ones).
  ValueId index_constant(int64_t v, const ir::Node& at) {
    ir::Literal lit{ir::ValueType{DType::i32, {}}, std::vector<uint8_t>(sizeof(int32_t))};
    const int32_t x = static_cast<int32_t>(v);
    std::memcpy(lit.bytes.data(), &x, sizeof x);
    return b_.add1(Op::constant, {}, {{"value", std::make_shared<const ir::Literal>(std::move(lit))}}, at.loc, at.scope);
  }

  bool is(ValueId v, double value) {
    std::optional<double> c = uniform_constant(v);
    return c && *c == value;
  }

  // Indexes the single-output nodes built so far by their output value.
  void record_producers() {
    const auto& nodes = b_.graph().nodes();
    for (; indexed_ < nodes.size(); ++indexed_)
      if (nodes[indexed_].outputs.size() == 1) producers_[nodes[indexed_].outputs[0]] = indexed_;
  }

  const ir::Graph& g_;
  ir::GraphBuilder b_;
  std::vector<ValueId> map_;
  std::unordered_map<ValueId, size_t> producers_;
  std::unordered_map<ValueId, std::vector<Piece>> sparse_;  // dynamic_update_slice chains built by add_disjoint_pieces
  size_t indexed_ = 0;
  int64_t rewrites_ = 0;
};

}  // namespace

SimplifyResult simplify(const ir::Graph& g) {
  Simplifier s(g);
  SimplifyResult r;
  r.graph = s.run();
  r.rewrites = s.rewrites();
  return r;
}

}  // namespace graft::transforms
