#include "differential/random_graph.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <random>

#include "ir/attr_schema.h"
#include "ir/builder.h"
#include "ir/op.h"

namespace graft::test {
namespace {

using ir::Ints;
using ir::Op;
using ir::ValueId;
using ir::ValueType;

constexpr DType kDTypes[] = {DType::bool_, DType::i32, DType::i64, DType::u32, DType::f32, DType::f64};

// Ops the generator draws: pure, no subgraphs, no axis names (those need a
// pmap or a transform around them), not jit-internal, no literal to invent.
bool drawable(Op op) {
  const std::string_view a = ir::op_info(op).attributes;
  return !ir::has_side_effects(op) && !ir::is_jit_internal(op) && !ir::is_collective(op) &&
         a.find(":graphs") == std::string_view::npos && a.find(":string") == std::string_view::npos &&
         a.find(":literal") == std::string_view::npos;
}

class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) {}

  int pick(int n) { return n <= 0 ? 0 : static_cast<int>(rng_() % static_cast<uint64_t>(n)); }
  bool coin(int one_in = 2) { return pick(one_in) == 0; }

  Shape shape(int max_rank = 3) {
    Shape s(static_cast<size_t>(pick(max_rank + 1)));
    for (int64_t& d : s) d = coin(12) ? 0 : 1 + pick(3);  // 0-size axes now and then, size-1 often
    return s;
  }

  Ints subset(int rank) {
    Ints a;
    for (int i = 0; i < rank; ++i)
      if (coin()) a.push_back(i);
    return a;
  }

  Ints permutation(int rank) {
    Ints p(static_cast<size_t>(rank));
    std::iota(p.begin(), p.end(), 0);
    std::shuffle(p.begin(), p.end(), rng_);
    return p;
  }

  // An attribute of `kind` named `name`, for an op reading `x` (its first operand, if any).
  ir::AttrValue attr(std::string_view name, ir::AttrKind kind, const ValueType* x) {
    const int rank = x ? x->rank() : 0;
    const Shape& s = x ? x->shape : kNoShape;
    switch (kind) {
      case ir::AttrKind::dtype:
        return (name == "index_dtype") ? DType::i32 : kDTypes[pick(6)];
      case ir::AttrKind::int_: {
        if (name == "reverse" || name == "tiled" || name == "is_stable") return int64_t{pick(2)};
        if (name == "num_keys") return int64_t{1};
        if (name == "batch_dims") return int64_t{coin(4) ? 1 : 0};
        return int64_t{rank > 0 ? pick(rank + 1) - (coin(8) ? 1 : 0) : 0};  // an axis, sometimes -1 or rank
      }
      case ir::AttrKind::float_:
        return 0.5 * (pick(7) - 3);
      case ir::AttrKind::ints: {
        if (name == "permutation") return permutation(rank);
        if (name == "axes" || name == "dimensions") return subset(rank);
        if (name == "new_sizes") {  // the operand's sizes, shuffled, with a 1 inserted or merged
          Ints n(s.begin(), s.end());
          std::shuffle(n.begin(), n.end(), rng_);
          if (coin(3)) n.insert(n.begin() + pick(static_cast<int>(n.size()) + 1), 1);
          if (n.size() >= 2 && coin(3)) {
            n[0] *= n[1];
            n.erase(n.begin() + 1);
          }
          return n;
        }
        if (name == "shape") return Ints(shape());  // iota, random_bits (broadcast_in_dim's is planned)
        if (name == "broadcast_dimensions") return pending_dims_;
        if (name == "start_indices") {
          Ints v;
          for (int64_t d : s) v.push_back(pick(static_cast<int>(d) + 1));
          pending_start_ = v;
          return v;
        }
        if (name == "limit_indices") {
          Ints v;
          for (size_t i = 0; i < s.size(); ++i) {
            const int64_t lo = i < pending_start_.size() ? pending_start_[i] : 0;
            v.push_back(lo + pick(static_cast<int>(s[i] - lo) + 1));
          }
          return v;
        }
        if (name == "strides") {
          Ints v(s.size());
          for (int64_t& k : v) k = 1 + pick(2);
          return v;
        }
        if (name == "padding_low" || name == "padding_high") {
          Ints v(s.size());
          for (int64_t& k : v) k = pick(4) - 1;
          return v;
        }
        if (name == "padding_interior") {
          Ints v(s.size());
          for (int64_t& k : v) k = pick(2);
          return v;
        }
        if (name == "slice_sizes") {
          Ints v;
          for (int64_t d : s) v.push_back(pick(static_cast<int>(d) + 1));
          return v;
        }
        if (name == "lhs_contracting" || name == "rhs_contracting" || name == "lhs_batch" || name == "rhs_batch")
          return dot_dims_[std::string(name)];
        return subset(rank);
      }
      default:
        return int64_t{0};
    }
  }

  // broadcast_in_dim's dimensions follow its shape (sorted by name, they come first).
  void plan_broadcast(const ValueType& x) {
    pending_dims_.clear();
    // The operand's axes in order, with new axes between; a size-1 axis may grow.
    Shape ns;
    for (int64_t d : x.shape) {
      if (coin(3)) ns.push_back(1 + pick(3));
      pending_dims_.push_back(static_cast<int64_t>(ns.size()));
      ns.push_back(d == 1 && coin(3) ? 1 + pick(3) : d);
    }
    if (coin(2)) ns.push_back(1 + pick(3));
    planned_shape_ = ns;
  }

  // dot_general: contracting pairs of equal size, batch pairs leading.
  void plan_dot(const ValueType& a, const ValueType& b) {
    dot_dims_.clear();
    Ints lc, rc, lb, rb;
    std::vector<bool> used_b(static_cast<size_t>(b.rank()), false);
    for (int i = 0; i < a.rank(); ++i) {
      if (!coin(2)) continue;
      for (int j = 0; j < b.rank(); ++j)
        if (!used_b[static_cast<size_t>(j)] && a.shape[static_cast<size_t>(i)] == b.shape[static_cast<size_t>(j)]) {
          used_b[static_cast<size_t>(j)] = true;
          (coin(3) ? lb : lc).push_back(i);
          (lb.size() + lc.size() > rb.size() + rc.size() && lb.size() > rb.size() ? rb : rc).push_back(j);
          break;
        }
    }
    dot_dims_["lhs_contracting"] = lc;
    dot_dims_["rhs_contracting"] = rc;
    dot_dims_["lhs_batch"] = lb;
    dot_dims_["rhs_batch"] = rb;
  }

  const Shape& planned_shape() const { return planned_shape_; }
  std::mt19937_64& rng() { return rng_; }

 private:
  static inline const Shape kNoShape{};
  std::mt19937_64 rng_;
  Ints pending_start_, pending_dims_;
  Shape planned_shape_;
  std::map<std::string, Ints> dot_dims_;
};

Array random_values(Gen& g, const ValueType& t) {
  int64_t n = 1;
  for (int64_t d : t.shape) n *= d;
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) {
    switch (t.dtype) {
      case DType::f32: case DType::f64: x = (g.pick(2001) - 1000) / 400.0; break;
      case DType::bool_: x = g.pick(2); break;
      case DType::u32: x = g.pick(20); break;
      default: x = g.pick(21) - 10; break;
    }
  }
  return astype(array(v, t.shape), t.dtype);
}

}  // namespace

RandomGraph random_graph(uint64_t seed, int nodes) {
  Gen g(seed);
  std::vector<Op> ops;
  for (int k = 0; k < ir::kNumOps; ++k)
    if (drawable(static_cast<Op>(k))) ops.push_back(static_cast<Op>(k));

  ir::GraphBuilder b;
  RandomGraph out;
  std::vector<ValueId> pool;
  const int n_inputs = 1 + g.pick(3);
  for (int i = 0; i < n_inputs; ++i) {
    // Float inputs most often (what the math ops take), every dtype sometimes.
    const DType t = g.coin(2) ? (g.coin() ? DType::f32 : DType::f64) : kDTypes[g.pick(6)];
    const ValueType type{t, g.shape()};
    pool.push_back(b.input(type));
    out.inputs.push_back(random_values(g, type));
  }
  for (int made = 0, tries = 0; made < nodes && tries < nodes * 200; ++tries) {
    const Op op = ops[static_cast<size_t>(g.pick(static_cast<int>(ops.size())))];
    const int arity = ir::op_info(op).arity == ir::kVariadic ? 1 + g.pick(3) : ir::op_info(op).arity;
    ir::IdList ins;
    for (int k = 0; k < arity; ++k) {
      // Elementwise ops of two operands take a second of the first's type half the time.
      ValueId v = pool[static_cast<size_t>(g.pick(static_cast<int>(pool.size())))];
      if (k > 0 && g.coin(2)) {
        for (ValueId w : pool)
          if (b.type(w) == b.type(ins[0]) && g.coin(2)) v = w;
      }
      ins.push_back(v);
    }
    const ValueType* x = ins.size() ? &b.type(ins[0]) : nullptr;
    const ValueType x_copy = x ? *x : ValueType{};
    if (op == Op::broadcast_in_dim && x) g.plan_broadcast(x_copy);
    if (op == Op::dot_general && ins.size() == 2) g.plan_dot(x_copy, b.type(ins[1]));
    ir::Attrs attrs;
    for (const ir::AttrSpec& spec : ir::attr_schema(op)) {
      if (op == Op::broadcast_in_dim && spec.name == "shape") attrs.set(std::string(spec.name), Ints(g.planned_shape()));
      else attrs.set(std::string(spec.name), g.attr(spec.name, spec.kind, x ? &x_copy : nullptr));
    }
    try {
      ir::IdList outs = b.add(op, ins, attrs);
      for (ValueId v : outs) {
        int64_t n = 1;
        for (int64_t d : b.type(v).shape) n *= d;
        if (n > 4096) throw Error("too big");  // keeps programs quick; not a finding
        pool.push_back(v);
      }
      out.ops.emplace_back(ir::op_name(op));
      ++made;
    } catch (const Error&) {
      // the shape rule refused: draw again
    }
  }
  // The last value and up to two others are the outputs.
  std::vector<ValueId> outputs = {pool.back()};
  for (int k = g.pick(3); k > 0; --k) outputs.push_back(pool[static_cast<size_t>(g.pick(static_cast<int>(pool.size())))]);
  out.graph = b.finish(outputs);
  return out;
}

}  // namespace graft::test
