#include "ir/fused_plan.h"

#include <algorithm>

#include "graft/errors.h"
#include "ir/attr_access.h"
#include "ir/literal.h"
#include "ir/op.h"

namespace graft::ir {
namespace {

std::vector<int64_t> row_major(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (int i = static_cast<int>(s.size()) - 2; i >= 0; --i) st[i] = st[i + 1] * s[i + 1];
  return st;
}

std::string op_str(Op op) { return std::string(op_name(op)); }

class Planner {
 public:
  explicit Planner(const Graph& g) : g_(g) { p_.value_of.assign(static_cast<size_t>(g.value_id_bound()), -1); }

  FusedPlan run() {
    if (space() && inputs() && nodes() && outputs()) return std::move(p_);
    FusedPlan refused;
    refused.refused = std::move(p_.refused);
    return refused;
  }

 private:
  bool refuse(std::string why) {
    p_.refused = std::move(why);
    return false;
  }

  // The element count of a type, or -1 (and the plan refused) when it overflows.
  int64_t count_of(const ValueType& t) {
    const int64_t n = checked_num_elements(t.shape);
    if (n < 0) refuse("shape " + shape_str(t.shape) + " has too many elements");
    return n;
  }

  int add(ValueId id, FusedValue v) {
    const int ord = static_cast<int>(p_.values.size());
    if (v.cls == ValueClass::uniform && v.scalar < 0) v.scalar = ord;
    p_.values.push_back(std::move(v));
    p_.value_of[static_cast<size_t>(id)] = ord;
    return ord;
  }

  int operand(ValueId id) const {
    if (id < 0 || id >= static_cast<ValueId>(p_.value_of.size()) || p_.value_of[static_cast<size_t>(id)] < 0)
      throw GraphFormatError("fused body: a node reads an undefined value");
    return p_.value_of[static_cast<size_t>(id)];
  }

  bool is_output(ValueId id) const {
    return std::find(g_.outputs().begin(), g_.outputs().end(), id) != g_.outputs().end();
  }

  // N: what the first reduction read by the body's outputs reduces; without
  // one, the largest input or value a node makes.
  bool space() {
    if (!reduced_space() && !largest_space()) return false;
    if (!p_.refused.empty()) return false;  // a shape too big
    bool any = false, single = true;
    for (const Node& node : g_.nodes()) {
      if (node.op == Op::constant) continue;
      any = true;
      const ValueId at = is_reduction(node.op) ? node.inputs[0] : node.outputs[0];
      single = single && g_.type(at).num_elements() == p_.N;
    }
    p_.single_space = any && single;
    return true;
  }

  // N from the first reduction a body output reads: false when there is none.
  bool reduced_space() {
    for (const Node& n : g_.nodes()) {
      if (!is_reduction(n.op) || n.outputs.empty() || !is_output(n.outputs[0])) continue;
      p_.N = count_of(g_.type(n.inputs[0]));
      return true;
    }
    return false;
  }

  // N as the largest input or value a node makes; false when one overflows.
  bool largest_space() {
    for (ValueId id : g_.inputs()) {
      const int64_t n = count_of(g_.type(id));
      if (n < 0) return false;
      p_.N = std::max(p_.N, n);
    }
    for (const Node& node : g_.nodes()) {
      if (is_reduction(node.op)) continue;
      for (ValueId id : node.outputs) {
        const int64_t n = count_of(g_.type(id));
        if (n < 0) return false;
        p_.N = std::max(p_.N, n);
      }
    }
    return true;
  }

  bool inputs() {
    for (size_t j = 0; j < g_.inputs().size(); ++j) {
      const ValueType& t = g_.type(g_.inputs()[j]);
      FusedValue v;
      v.dtype = t.dtype;
      v.shape = t.shape;
      v.count = count_of(t);
      if (v.count < 0) return false;
      if (v.count == 1) {
        v.cls = ValueClass::uniform;
        FusedStep step;
        step.what = FusedStep::input;
        step.input_index = static_cast<int>(j);
        step.out = add(g_.inputs()[j], std::move(v));
        p_.steps.push_back(std::move(step));
      } else {
        v.cls = ValueClass::view;
        v.input = static_cast<int>(j);
        v.strides = row_major(t.shape);
        add(g_.inputs()[j], std::move(v));
      }
    }
    return true;
  }

  bool nodes() {
    for (const Node& node : g_.nodes())
      if (!add_node(node)) return false;
    return true;
  }

  bool add_node(const Node& node) {
    if (node.outputs.size() != 1) return refuse(op_str(node.op) + ": nodes with several outputs cannot be fused");
    const ValueId out = node.outputs[0];
    const ValueType& ot = g_.type(out);
    FusedValue v;
    v.dtype = ot.dtype;
    v.shape = ot.shape;
    v.count = count_of(ot);
    if (v.count < 0) return false;
    std::vector<int> in;
    for (ValueId id : node.inputs) {
      in.push_back(operand(id));
      if (p_.value(in.back()).cls == ValueClass::reduced)
        return refuse(op_str(node.op) + " reads the result of a reduction, which ends its kernel");
    }

    if (node.op == Op::constant) {
      if (v.count == 1) {
        v.cls = ValueClass::uniform;
        FusedStep step;
        step.what = FusedStep::constant;
        step.node = &node;
        step.out = add(out, std::move(v));
        p_.steps.push_back(std::move(step));
      } else {
        v.cls = ValueClass::view;
        v.constant = &node;
        v.strides = row_major(ot.shape);
        add(out, std::move(v));
      }
      return true;
    }

    if (node.op == Op::reshape || node.op == Op::broadcast_in_dim) {
      const FusedValue& src = p_.value(in[0]);
      if (v.count == src.count && src.cls != ValueClass::view) {  // same elements, same order
        p_.value_of[static_cast<size_t>(out)] = in[0];
        return true;
      }
      switch (src.cls) {
        case ValueClass::uniform:
          v.cls = ValueClass::uniform;
          v.scalar = src.scalar;
          add(out, std::move(v));
          return true;
        case ValueClass::view:
          return add_view(node, in[0], std::move(v));
        default:
          return refuse(op_str(node.op) + " of a computed value to " + type_str(ot) +
                        ": only body inputs may be broadcast");
      }
    }

    if (is_reduction(node.op)) {
      const ValueType& rt = g_.type(node.inputs[0]);
      v.cls = ValueClass::reduced;
      FusedReduction r;
      r.node = &node;
      r.in = in[0];
      r.out = add(out, std::move(v));
      std::vector<bool> reduced(rt.shape.size(), false);
      for (int64_t a : ints_attr(node, "axes")) {
        const int64_t ax = a < 0 ? a + rt.rank() : a;
        if (ax < 0 || ax >= rt.rank()) throw GraphFormatError("fused body: reduction axis out of range");
        reduced[static_cast<size_t>(ax)] = true;
      }
      for (size_t d = 0; d < rt.shape.size(); ++d) {
        if (rt.shape[d] == 1) continue;
        if (!r.groups.empty() && r.groups.back().reduced == reduced[d]) r.groups.back().size *= rt.shape[d];
        else r.groups.push_back(ReductionGroup{rt.shape[d], reduced[d]});
      }
      int64_t in_st = 1, out_st = 1;
      for (auto gr = r.groups.rbegin(); gr != r.groups.rend(); ++gr) {
        gr->in_stride = in_st;
        in_st *= gr->size;
        if (!gr->reduced) {
          gr->out_stride = out_st;
          out_st *= gr->size;
        }
      }
      FusedStep step;
      step.what = FusedStep::reduction;
      step.node = &node;
      step.in = in;
      step.out = r.out;
      p_.steps.push_back(std::move(step));
      p_.reductions.push_back(std::move(r));
      return true;
    }

    if (op_info(node.op).family != OpFamily::elementwise) return refuse(op_str(node.op) + " cannot be fused");
    bool all_uniform = true;
    for (int s : in) all_uniform = all_uniform && p_.value(s).cls == ValueClass::uniform;
    if (all_uniform) {
      v.cls = ValueClass::uniform;
    } else {
      if (v.count != p_.N)
        return refuse(op_str(node.op) + " computes " + type_str(ot) + ", not the iteration space's " +
                      std::to_string(p_.N) + " elements");
      for (size_t k = 0; k < in.size(); ++k) {
        const FusedValue& o = p_.value(in[k]);
        if (o.cls == ValueClass::view && o.count != p_.N)
          return refuse(op_str(node.op) + " reads " + type_str(g_.type(node.inputs[k])) +
                        ", not the iteration space's elements; an input must be broadcast to it first");
      }
      v.cls = ValueClass::full;
    }
    FusedStep step;
    step.what = FusedStep::op;
    step.node = &node;
    step.in = std::move(in);
    step.out = add(out, std::move(v));
    p_.steps.push_back(std::move(step));
    return true;
  }

  // A reshape or broadcast of a view: a view of the same buffer with new
  // strides, or (when strides cannot say it) the view itself, reordered by
  // nothing: same count, same elements in the same order.
  bool add_view(const Node& node, int src_ord, FusedValue v) {
    const FusedValue& src = p_.value(src_ord);
    const Shape& in_shape = g_.type(node.inputs[0]).shape;
    v.cls = ValueClass::view;
    v.input = src.input;
    v.constant = src.constant;
    if (node.op == Op::reshape && contiguous(src)) {
      v.strides = row_major(v.shape);
    } else if (node.op == Op::broadcast_in_dim && src.shape == in_shape) {
      const Ints& bd = ints_attr(node, "broadcast_dimensions");
      v.strides.assign(v.shape.size(), 0);
      for (size_t i = 0; i < bd.size(); ++i)
        if (src.shape[i] != 1) v.strides[static_cast<size_t>(bd[i])] = src.strides[i];
    } else if (v.count == src.count) {
      p_.value_of[static_cast<size_t>(node.outputs[0])] = src_ord;
      return true;
    } else {
      return refuse(op_str(node.op) + " of a strided view of " + type_str(g_.type(node.inputs[0])) +
                    " cannot be fused; broadcast the reshaped input instead");
    }
    add(node.outputs[0], std::move(v));
    return true;
  }

  bool outputs() {
    for (size_t pos = 0; pos < g_.outputs().size(); ++pos) {
      const ValueId id = g_.outputs()[pos];
      if (id < 0 || id >= static_cast<ValueId>(p_.value_of.size()) || p_.value_of[static_cast<size_t>(id)] < 0)
        throw GraphFormatError("fused body: an output is not a value of the body");
      FusedOutput o;
      o.value = p_.value_of[static_cast<size_t>(id)];
      const FusedValue& v = p_.value(o.value);
      if (v.cls == ValueClass::reduced) {
        o.store = OutputStore::reduction;
        for (FusedReduction& r : p_.reductions)
          if (r.out == o.value) r.outputs.push_back(pos);
      } else if (v.cls == ValueClass::uniform && v.count == 1) {
        o.store = OutputStore::scalar;
      } else if (v.cls == ValueClass::full || v.count == p_.N) {
        o.store = OutputStore::loop;
      } else if (v.cls == ValueClass::uniform) {
        o.store = OutputStore::fill;
      } else {
        o.store = contiguous(v) ? OutputStore::copy : OutputStore::none;
      }
      p_.outputs.push_back(o);
    }
    return true;
  }

  const Graph& g_;
  FusedPlan p_;
};

}  // namespace

FusedPlan plan_fused_body(const Graph& body) { return Planner(body).run(); }

void merged_axes(const FusedValue& v, Shape* sizes, std::vector<int64_t>* strides) {
  for (size_t d = 0; d < v.shape.size(); ++d) {
    if (v.shape[d] == 1) continue;
    const int64_t st = v.cls == ValueClass::view ? v.strides[d] : 0;
    if (!sizes->empty() && strides->back() == st * v.shape[d]) {
      sizes->back() *= v.shape[d];
      strides->back() = st;
    } else {
      sizes->push_back(v.shape[d]);
      strides->push_back(st);
    }
  }
}

bool contiguous(const FusedValue& v) {
  if (v.cls != ValueClass::view) return false;
  Shape s;
  std::vector<int64_t> st;
  merged_axes(v, &s, &st);
  return s.empty() || (s.size() == 1 && st[0] == 1);
}

bool outer_reduced_inner(const std::vector<ReductionGroup>& groups, OuterReducedInner* out) {
  OuterReducedInner g;
  size_t k = 0;
  if (k < groups.size() && !groups[k].reduced) g.outer = groups[k++].size;
  if (k < groups.size() && groups[k].reduced) g.reduced = groups[k++].size;
  if (k < groups.size() && !groups[k].reduced) g.inner = groups[k++].size;
  *out = g;
  return k == groups.size();
}

}  // namespace graft::ir
