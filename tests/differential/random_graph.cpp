#include "differential/random_graph.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <random>

#include "ir/attr_schema.h"
#include "ir/builder.h"
#include "ir/dtype.h"
#include "ir/op.h"

namespace graft::test {
namespace {

using ir::Ints;
using ir::Op;
using ir::ValueId;
using ir::ValueType;

// Every dtype (the halves and complex arithmetic fuse and run generated code
// under jit, computed as the interpreter computes them).
constexpr DType kDTypes[] = {DType::bool_, DType::i8,  DType::i16, DType::i32, DType::i64,
                             DType::u8,    DType::u16, DType::u32, DType::u64, DType::f16,
                             DType::bf16,  DType::f32, DType::f64, DType::c64, DType::c128};
constexpr int kNumDrawn = static_cast<int>(std::size(kDTypes));

// Ops the generator draws: pure, no axis names (those need a pmap or a
// transform around them), not jit-internal; of those with subgraphs, the
// control flow (the custom-derivative ops pair a function with a rule the
// generator cannot invent).
bool drawable(Op op) {
  const std::string_view a = ir::op_info(op).attributes;
  if (op == Op::cond || op == Op::while_loop || op == Op::scan) return true;
  return !ir::has_side_effects(op) && !ir::is_jit_internal(op) && !ir::is_collective(op) &&
         a.find(":graphs") == std::string_view::npos && a.find(":string") == std::string_view::npos;
}

class Gen {
 public:
  Gen(uint64_t seed, bool differentiable) : differentiable_(differentiable), rng_(seed) {}

  // Drawing a program for derivative checks: f64 values, and i32 ones that
  // only index (from constants and iota, never converted from a float).
  bool differentiable() const { return differentiable_; }
  DType dtype() { return differentiable_ ? (coin(3) ? DType::i32 : DType::f64) : kDTypes[pick(kNumDrawn)]; }

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
        return (name == "index_dtype") ? DType::i32 : dtype();
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
  bool differentiable_;
  std::mt19937_64 rng_;
  Ints pending_start_, pending_dims_;
  Shape planned_shape_;
  std::map<std::string, Ints> dot_dims_;
};

Array random_values(Gen& g, const ValueType& t) {
  if (ir::is_complex(t.dtype)) {  // parts on the floats' grid
    const ValueType part{ir::real_dtype(t.dtype), t.shape};
    return complex(random_values(g, part), random_values(g, part));
  }
  int64_t n = 1;
  for (int64_t d : t.shape) n *= d;
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) {
    switch (t.dtype) {
      // Floats on a grid of 1/400 (so that ties and exact zeros occur), or, in a program for
      // derivative checks, anywhere (a tie of two unrelated values is a kink, where finite
      // differences give the mean of the slopes on its two sides and a derivative rule one of them).
      case DType::f16:
      case DType::bf16:
      case DType::f32:
      case DType::f64:
        x = g.differentiable() ? std::uniform_real_distribution<double>(-2.5, 2.5)(g.rng()) : (g.pick(2001) - 1000) / 400.0;
        break;
      case DType::bool_: x = g.pick(2); break;
      case DType::u8:
      case DType::u16:
      case DType::u32:
      case DType::u64: x = g.pick(20); break;
      default: x = g.pick(21) - 10; break;
    }
  }
  return astype(array(v, t.shape), t.dtype);
}

ir::LiteralPtr literal_of(const Array& a) {
  const auto* p = static_cast<const uint8_t*>(a.unsafe_buffer_pointer());
  const size_t bytes = static_cast<size_t>(a.size()) * ir::dtype_size(a.dtype());
  return std::make_shared<const ir::Literal>(ir::Literal{{a.dtype(), a.shape()}, std::vector<uint8_t>(p, p + bytes)});
}

// One graph being grown (the program or a subgraph of it): its builder, the
// values made so far, and how deep in subgraphs it lies.
struct Scope {
  Gen& g;
  const std::vector<Op>& table;   // the drawable ops
  std::vector<std::string>& ops;  // the ops drawn, shared by every scope of a program
  int depth = 0;
  ir::GraphBuilder b{};
  std::vector<ValueId> pool{};

  ValueId any() { return pool[static_cast<size_t>(g.pick(static_cast<int>(pool.size())))]; }

  // A value of type t: the latest made (most often) or another; nullopt if none has it.
  std::optional<ValueId> of_type(const ValueType& t) {
    std::optional<ValueId> found;
    for (ValueId v : pool)
      if (b.type(v) == t && (!found || !g.coin(4))) found = v;
    return found;
  }

  // The latest value of dtype t (there is one: the inputs are of it).
  std::optional<ValueId> of_type_latest(DType t) {
    for (auto v = pool.rbegin(); v != pool.rend(); ++v)
      if (b.type(*v).dtype == t) return *v;
    return std::nullopt;
  }

  // Keeps the node's outputs if the shape rule accepted it and they are small.
  bool add(Op op, ir::IdList ins, ir::Attrs attrs, const char* name = nullptr) {
    try {
      ir::IdList outs = b.add(op, std::move(ins), std::move(attrs));
      for (ValueId v : outs) {
        int64_t n = 1;
        for (int64_t d : b.type(v).shape) n *= d;
        if (n > 4096) return false;  // keeps programs quick; not a finding (the node stays, unused)
      }
      pool.insert(pool.end(), outs.begin(), outs.end());
      ops.emplace_back(name ? name : ir::op_name(op));
      return true;
    } catch (const Error&) {
      return false;  // the shape rule refused: draw again
    }
  }
};

void grow(Scope& s, int nodes);

// A subgraph over inputs of `types`, grown by a few random nodes; `outputs`
// picks its results from its scope.
template <class Outputs>
ir::GraphPtr subgraph(Scope& parent, const std::vector<ValueType>& types, Outputs outputs) {
  Scope s{parent.g, parent.table, parent.ops, parent.depth + 1};
  for (const ValueType& t : types) s.pool.push_back(s.b.input(t));
  grow(s, 1 + s.g.pick(3));
  std::vector<ValueId> outs = outputs(s);
  return s.b.finish(std::move(outs));
}

// Each output the latest value of its type (the input of that type at worst).
std::vector<ValueId> outputs_of_types(Scope& s, const std::vector<ValueType>& types) {
  std::vector<ValueId> outs;
  for (const ValueType& t : types) outs.push_back(*s.of_type(t));
  return outs;
}

bool add_plain(Scope& s, Op op) {
  Gen& g = s.g;
  const int arity = ir::op_info(op).arity == ir::kVariadic ? 1 + g.pick(3) : ir::op_info(op).arity;
  ir::IdList ins;
  for (int k = 0; k < arity; ++k) {
    // Elementwise ops of two operands take a second of the first's type half the time.
    ValueId v = s.any();
    if (k > 0 && g.coin(2)) {
      for (ValueId w : s.pool)
        if (s.b.type(w) == s.b.type(ins[0]) && g.coin(2)) v = w;
    }
    ins.push_back(v);
  }
  const std::optional<ValueType> x = ins.size() ? std::optional<ValueType>(s.b.type(ins[0])) : std::nullopt;
  if (op == Op::broadcast_in_dim && x) g.plan_broadcast(*x);
  if (op == Op::dot_general && ins.size() == 2) g.plan_dot(*x, s.b.type(ins[1]));
  ir::Attrs attrs;
  for (const ir::AttrSpec& spec : ir::attr_schema(op)) {
    if (op == Op::broadcast_in_dim && spec.name == "shape") attrs.set(std::string(spec.name), Ints(g.planned_shape()));
    else attrs.set(std::string(spec.name), g.attr(spec.name, spec.kind, x ? &*x : nullptr));
  }
  return s.add(op, std::move(ins), std::move(attrs));
}

bool add_constant(Scope& s) {
  const ValueType t{s.g.dtype(), s.g.shape(2)};
  return s.add(Op::constant, {}, {{"value", literal_of(random_values(s.g, t))}});
}

// cond(index, args..): the index an i32 or bool scalar of the scope, or one
// made from the first element of a value (its sign, so -1, 0 or 1, clamped).
bool add_cond(Scope& s) {
  Gen& g = s.g;
  std::optional<ValueId> index;
  for (ValueId v : s.pool) {
    const ValueType& t = s.b.type(v);
    if (t.rank() == 0 && (t.dtype == DType::i32 || t.dtype == DType::bool_) && g.coin(2)) index = v;
  }
  if (!index && g.differentiable()) {  // no jumps: a constant index, in range or clamped
    index = s.b.add1(Op::constant, {}, {{"value", literal_of(astype(array(std::vector<double>{double(g.pick(5) - 1)}, Shape{}), DType::i32))}});
  } else if (!index) {
    const ValueId v = s.any();
    const ValueType t = s.b.type(v);
    int64_t n = 1;
    for (int64_t d : t.shape) n *= d;
    if (n == 0) return false;
    ValueId x = s.b.add1(Op::slice, {v}, {{"start_indices", Ints(t.shape.size(), 0)},
                                          {"limit_indices", Ints(t.shape.size(), 1)},
                                          {"strides", Ints(t.shape.size(), 1)}});
    x = s.b.add1(Op::reshape, {x}, {{"new_sizes", Ints{}}});
    // sign of a float jumps at 0: it is listed, so grad is not checked across it
    if (t.dtype != DType::bool_ && !ir::is_unsigned_integer(t.dtype)) {
      x = s.b.add1(Op::sign, {x});
      if (t.dtype == DType::f32 || t.dtype == DType::f64) s.ops.emplace_back("sign");
    }
    index = s.b.add1(Op::convert_element_type, {x}, {{"new_dtype", DType::i32}});
  }
  const bool boolean = s.b.type(*index).dtype == DType::bool_;
  const int n_branches = boolean ? 2 : 2 + g.pick(2);
  ir::IdList ins = {*index};
  std::vector<ValueType> arg_types, out_types;
  for (int k = 1 + g.pick(2); k > 0; --k) {
    ins.push_back(s.any());
    arg_types.push_back(s.b.type(ins.back()));
    if (out_types.empty() || g.coin(2)) out_types.push_back(arg_types.back());
  }
  ir::Graphs branches;
  for (int k = 0; k < n_branches; ++k)
    branches.push_back(subgraph(s, arg_types, [&](Scope& b) { return outputs_of_types(b, out_types); }));
  return s.add(Op::cond, std::move(ins), {{"branches", std::move(branches)}});
}

// while(cconsts.., bconsts.., counter, carry..): at most 3 trips, counted by
// an i32 carry; the predicate sometimes also asks a bool the cond computes.
bool add_while(Scope& s) {
  Gen& g = s.g;
  const ValueType counter{DType::i32, {}};
  auto i32 = [](int v) { return literal_of(astype(array(std::vector<double>{double(v)}, Shape{}), DType::i32)); };
  std::vector<ValueType> cconsts, bconsts, carry = {counter};
  std::vector<ValueId> ins, carry_ins;
  for (int k = g.pick(2); k > 0; --k) ins.push_back(s.any()), cconsts.push_back(s.b.type(ins.back()));
  for (int k = g.pick(2); k > 0; --k) ins.push_back(s.any()), bconsts.push_back(s.b.type(ins.back()));
  carry_ins.push_back(s.b.add1(Op::constant, {}, {{"value", i32(0)}}));
  for (int k = 1 + g.pick(2); k > 0; --k) carry_ins.push_back(s.any()), carry.push_back(s.b.type(carry_ins.back()));
  ins.insert(ins.end(), carry_ins.begin(), carry_ins.end());
  const int trips = g.pick(4);

  std::vector<ValueType> cond_in = cconsts;
  cond_in.insert(cond_in.end(), carry.begin(), carry.end());
  ir::GraphPtr cond = subgraph(s, cond_in, [&](Scope& c) {
    const ValueId count = c.pool[cconsts.size()];
    ValueId p = c.b.add1(Op::lt, {count, c.b.add1(Op::constant, {}, {{"value", i32(trips)}})});
    if (std::optional<ValueId> q = c.of_type({DType::bool_, {}}); q && *q != p && g.coin(2))
      p = c.b.add1(Op::bitwise_and, {p, *q});
    return std::vector<ValueId>{p};
  });
  std::vector<ValueType> body_in = bconsts;
  body_in.insert(body_in.end(), carry.begin(), carry.end());
  ir::GraphPtr body = subgraph(s, body_in, [&](Scope& c) {
    const ValueId count = c.pool[bconsts.size()];
    std::vector<ValueId> outs = {c.b.add1(Op::add, {count, c.b.add1(Op::constant, {}, {{"value", i32(1)}})})};
    for (size_t k = 1; k < carry.size(); ++k) outs.push_back(*c.of_type(carry[k]));
    return outs;
  });
  return s.add(Op::while_loop, ir::IdList(ins.begin(), ins.end()),
               {{"cond", ir::Graphs{cond}},
                {"cond_nconsts", int64_t(cconsts.size())},
                {"body", ir::Graphs{body}},
                {"body_nconsts", int64_t(bconsts.size())},
                {"checkpoints", int64_t{128}}});
}

// scan(consts.., init.., xs..) over the leading axis of xs (values of the
// scope with rank >= 1 and the same leading size).
bool add_scan(Scope& s) {
  Gen& g = s.g;
  const ValueId first = s.any();
  const ValueType t = s.b.type(first);
  if (t.rank() == 0) return false;
  const int64_t length = t.shape[0];
  std::vector<ValueId> consts, init, xs = {first};
  for (ValueId v : s.pool)
    if (v != first && s.b.type(v).rank() > 0 && s.b.type(v).shape[0] == length && g.coin(4)) xs.push_back(v);
  for (int k = g.pick(2); k > 0; --k) consts.push_back(s.any());
  for (int k = g.pick(3); k > 0; --k) init.push_back(s.any());
  std::vector<ValueType> body_in, carry;
  for (ValueId v : consts) body_in.push_back(s.b.type(v));
  for (ValueId v : init) carry.push_back(s.b.type(v)), body_in.push_back(s.b.type(v));
  for (ValueId v : xs) {
    const ValueType& x = s.b.type(v);
    body_in.push_back({x.dtype, Shape(x.shape.begin() + 1, x.shape.end())});
  }
  ir::GraphPtr body = subgraph(s, body_in, [&](Scope& c) {
    std::vector<ValueId> outs = outputs_of_types(c, carry);
    for (int k = g.pick(3); k > 0; --k) outs.push_back(c.any());  // ys: anything the body made
    if (outs.empty()) outs.push_back(c.pool.back());
    return outs;
  });
  std::vector<ValueId> ins = consts;
  ins.insert(ins.end(), init.begin(), init.end());
  ins.insert(ins.end(), xs.begin(), xs.end());
  return s.add(Op::scan, ir::IdList(ins.begin(), ins.end()),
               {{"body", ir::Graphs{body}}, {"length", length}, {"num_carry", int64_t(init.size())},
                {"num_consts", int64_t(consts.size())}, {"reverse", int64_t{g.pick(2)}}});
}

// Adds `nodes` random nodes to the scope: ops of the table most often,
// control flow (at most two subgraphs deep) now and then.
void grow(Scope& s, int nodes) {
  for (int made = 0, tries = 0; made < nodes && tries < nodes * 200; ++tries) {
    const Op op = s.table[static_cast<size_t>(s.g.pick(static_cast<int>(s.table.size())))];
    bool ok = false;
    if (op == Op::constant) ok = add_constant(s);
    else if (op == Op::cond || op == Op::while_loop || op == Op::scan) {
      if (s.depth < 2 && s.g.coin(3))  // rarer than one op, as a program holds few
        ok = op == Op::cond ? add_cond(s) : op == Op::while_loop ? add_while(s) : add_scan(s);
    } else ok = add_plain(s, op);
    made += ok;
  }
}

}  // namespace

RandomGraph random_graph(uint64_t seed, int nodes, bool differentiable) {
  Gen g(seed, differentiable);
  std::vector<Op> table;
  for (int k = 0; k < ir::kNumOps; ++k) {
    const Op op = static_cast<Op>(k);
    // For derivative checks: no op whose derivative is not the slope (stop_gradient), no jumps (rem,
    // ops the table calls not differentiable) and no conversion (a float made an integer jumps).
    if (differentiable && (!ir::is_differentiable(op) || op == Op::stop_gradient || op == Op::rem ||
                           op == Op::convert_element_type))
      continue;
    if (drawable(op)) table.push_back(op);
  }

  RandomGraph out;
  Scope s{g, table, out.ops};
  const int n_inputs = 1 + g.pick(3);
  for (int i = 0; i < n_inputs; ++i) {
    // Float inputs most often (what the math ops take), every dtype sometimes.
    const DType t = differentiable ? DType::f64
                    : g.coin(2)    ? (g.coin() ? DType::f32 : DType::f64)
                                   : kDTypes[g.pick(kNumDrawn)];
    const ValueType type{t, g.shape()};
    s.pool.push_back(s.b.input(type));
    out.inputs.push_back(random_values(g, type));
  }
  grow(s, nodes);
  // The last value and up to two others are the outputs (for derivative checks, the last f64 value first).
  std::vector<ValueId> outputs = {s.pool.back()};
  if (differentiable) outputs = {*s.of_type_latest(DType::f64)};
  for (int k = g.pick(3); k > 0; --k) outputs.push_back(s.any());
  out.graph = s.b.finish(outputs);
  return out;
}

}  // namespace graft::test
