#include "codegen/cpu/kernel_plan.h"
#include "ir/attr_access.h"

#include <algorithm>

namespace graft::codegen::cpu::detail {
namespace {

int new_val(Plan& p, ValueId id, Val v) {
  const int s = static_cast<int>(p.vals.size());
  v.ord = s;
  p.vals.push_back(std::move(v));
  p.slot[id] = s;
  return s;
}

std::string val_desc(const ir::Graph& g, ValueId id) { return ir::type_str(g.type(id)); }

}  // namespace

Plan analyze(const ir::Graph& g) {
  Plan p;
  p.slot.assign(static_cast<size_t>(g.value_id_bound()), -1);
  const auto& nodes = g.nodes();
  size_t num_nodes = nodes.size();

  // A trailing reduction, when one of the outputs is its result.
  const Node* red = nullptr;
  if (!nodes.empty() && emits_reduction(nodes.back().op)) {
    red = &nodes.back();
    --num_nodes;
    if (std::find(g.outputs().begin(), g.outputs().end(), red->outputs[0]) == g.outputs().end()) red = nullptr;
  }
  if (red) {
    p.N = count_of(g.type(red->inputs[0]).shape);
  } else {
    for (ValueId id : g.inputs()) p.N = std::max(p.N, count_of(g.type(id).shape));
    for (size_t i = 0; i < num_nodes; ++i)
      for (ValueId id : nodes[i].outputs) p.N = std::max(p.N, count_of(g.type(id).shape));
  }

  for (size_t j = 0; j < g.inputs().size(); ++j) {
    const ValueType& t = g.type(g.inputs()[j]);
    Val v;
    v.dtype = t.dtype;
    v.count = count_of(t.shape);
    if (v.count == 1) {
      v.kind = Kind::uniform;
      int s = new_val(p, g.inputs()[j], v);
      p.uniforms.push_back(Step{Step::input, s, static_cast<int>(j), nullptr, {}, std::nullopt});
    } else {
      v.kind = Kind::view;
      v.input = static_cast<int>(j);
      v.shape = t.shape;
      v.strides = row_major(t.shape);
      new_val(p, g.inputs()[j], v);
    }
  }

  for (size_t ni = 0; ni < num_nodes; ++ni) {
    const Node& node = nodes[ni];
    if (node.outputs.size() != 1) fail(cat(std::string(ir::op_name(node.op)), ": nodes with several outputs cannot be fused"));
    const ValueId out = node.outputs[0];
    const ValueType& ot = g.type(out);
    const int64_t ocount = count_of(ot.shape);
    std::vector<int> in;
    for (ValueId id : node.inputs) {
      if (id < 0 || id >= static_cast<ValueId>(p.slot.size()) || p.slot[id] < 0)
        throw GraphFormatError("cpu codegen: a node reads an undefined value");
      in.push_back(p.slot[id]);
    }
    if (node.op == Op::constant) {
      if (ocount != 1)
        fail(cat("constant ", ir::type_str(ot), " has ", num(ocount),
                 " elements; only one-element constants are kernel parameters (pass bigger ones as inputs)"));
      Val v;
      v.kind = Kind::uniform;
      v.dtype = ot.dtype;
      v.count = 1;
      int s = new_val(p, out, v);
      p.uniforms.push_back(Step{Step::constant, s, p.num_scalars++, &node, {}, std::nullopt});
      continue;
    }
    if (node.op == Op::reshape || node.op == Op::broadcast_in_dim) {
      const Val src = p.vals[in[0]];  // a copy: new_val may grow the table
      if (src.kind == Kind::uniform && ocount == 1) {
        p.slot[out] = in[0];
      } else if (src.kind == Kind::full) {
        if (ocount != src.count)
          fail(cat(std::string(ir::op_name(node.op)), " of a computed value to ", ir::type_str(ot),
                   ": only body inputs may be broadcast"));
        p.slot[out] = in[0];  // same elements, same order
      } else {
        Val v;
        v.kind = Kind::view;
        v.dtype = ot.dtype;
        v.count = ocount;
        v.shape = ot.shape;
        if (src.kind == Kind::uniform) {
          v.splat = src.ord;
          v.strides.assign(ot.shape.size(), 0);
        } else if (src.input < 0) {
          v.splat = src.splat;
          v.strides.assign(ot.shape.size(), 0);
        } else if (node.op == Op::reshape) {
          if (!contiguous(src)) fail("reshape of a broadcast input cannot be fused; broadcast the reshaped input instead");
          v.input = src.input;
          v.strides = row_major(ot.shape);
        } else {
          const ir::Ints& bd = ir::ints_attr(node, "broadcast_dimensions");
          v.input = src.input;
          v.strides.assign(ot.shape.size(), 0);
          for (size_t i = 0; i < bd.size(); ++i)
            if (src.shape[i] != 1) v.strides[bd[i]] = src.strides[i];
        }
        new_val(p, out, v);
      }
      continue;
    }
    if (ir::op_info(node.op).family != ir::OpFamily::elementwise) {
      if (emits_reduction(node.op)) fail(cat(std::string(ir::op_name(node.op)), " must be the body's last node (and an output)"));
      fail(cat(std::string(ir::op_name(node.op)), " cannot be fused into a CPU kernel"));
    }
    // An elementwise op.
    const DType dt = g.type(node.inputs[node.op == Op::select ? 1 : 0]).dtype;
    const std::optional<MathFn> math = ir::is_floating(dt) ? math_fn_for(node.op) : std::nullopt;
    if (!math) op_expr(node.op, dt, ot.dtype, std::vector<std::string>(node.inputs.size(), "x"));  // throws when no kernel
    bool all_uniform = true;
    for (int s : in) all_uniform = all_uniform && p.vals[s].kind == Kind::uniform;
    Val v;
    v.dtype = ot.dtype;
    v.count = ocount;
    Step step{Step::op, -1, 0, &node, in, math};
    if (all_uniform && ocount == 1) {
      v.kind = Kind::uniform;
      step.out = new_val(p, out, v);
      p.uniforms.push_back(step);
      continue;
    }
    if (ocount != p.N)
      fail(cat(std::string(ir::op_name(node.op)), " computes ", ir::type_str(ot), ", not the iteration space's ", num(p.N),
               " elements"));
    for (size_t k = 0; k < in.size(); ++k) {
      const Val& o = p.vals[in[k]];
      if (o.kind == Kind::view && o.count != p.N)
        fail(cat(std::string(ir::op_name(node.op)), " reads ", val_desc(g, node.inputs[k]), " of ", num(o.count),
                 " elements; an input must be broadcast to the iteration space first"));
    }
    v.kind = Kind::full;
    step.out = new_val(p, out, v);
    p.fulls.push_back(step);
  }

  // Outputs.
  for (size_t pos = 0; pos < g.outputs().size(); ++pos) {
    ValueId id = g.outputs()[pos];
    if (red && id == red->outputs[0]) {
      p.outputs.push_back({pos, -1, Store::reduction});
      continue;
    }
    if (id < 0 || id >= static_cast<ValueId>(p.slot.size()) || p.slot[id] < 0)
      throw GraphFormatError("cpu codegen: an output is not a value of the body");
    int s = p.slot[id];
    const Val& v = p.vals[s];
    if (v.kind == Kind::uniform) {
      p.outputs.push_back({pos, s, Store::uniform});
    } else if (v.kind == Kind::full || v.count == p.N) {
      p.outputs.push_back({pos, s, Store::full});
    } else if (v.input < 0) {
      p.outputs.push_back({pos, s, Store::fill});
    } else if (contiguous(v)) {
      p.outputs.push_back({pos, s, Store::copy});
    } else {
      fail(cat("output ", num(static_cast<int64_t>(pos)), " is a broadcast input of ", num(v.count),
               " elements, not the iteration space's ", num(p.N)));
    }
  }

  if (red) {
    p.has_red = true;
    p.red_op = red->op;
    p.red_in = p.slot[red->inputs[0]];
    const ValueType& rt = g.type(red->inputs[0]);
    p.red_dtype = rt.dtype;
    if (p.red_op == Op::reduce_sum && p.red_dtype == DType::bool_) fail("reduce_sum of bool has no kernel");
    p.red_count = count_of(g.type(red->outputs[0]).shape);
    std::vector<bool> reduced(rt.shape.size(), false);
    for (int64_t a : ir::ints_attr(*red, "axes")) {
      int64_t ax = a < 0 ? a + rt.rank() : a;
      if (ax < 0 || ax >= rt.rank()) throw GraphFormatError("cpu codegen: reduction axis out of range");
      reduced[ax] = true;
    }
    for (size_t d = 0; d < rt.shape.size(); ++d) {
      if (rt.shape[d] == 1) continue;
      if (!p.groups.empty() && p.groups.back().reduced == reduced[d]) p.groups.back().size *= rt.shape[d];
      else p.groups.push_back(Group{rt.shape[d], reduced[d]});
    }
    int64_t in_st = 1, out_st = 1;
    for (int i = static_cast<int>(p.groups.size()) - 1; i >= 0; --i) {
      p.groups[i].in_stride = in_st;
      in_st *= p.groups[i].size;
      if (!p.groups[i].reduced) {
        p.groups[i].out_stride = out_st;
        out_st *= p.groups[i].size;
      }
    }
    const Val& rv = p.vals[p.red_in];
    if (rv.kind == Kind::view && rv.count != p.N) fail("the reduction reads a broadcast input of the wrong size");
  }

  // Stages and what crosses them.
  bool any_full_output = false;
  for (const Output& o : p.outputs) any_full_output = any_full_output || o.how == Store::full;
  p.has_loop = p.N > 0 && (any_full_output || p.has_red);
  if (!p.has_loop) return p;
  for (size_t f = 0; f < p.fulls.size(); ++f) {
    if (p.fulls[f].math) {
      p.stages.push_back(Stage{true, {f}});
      p.has_calls = true;
    } else {
      if (p.stages.empty() || p.stages.back().call) p.stages.push_back(Stage{false, {}});
      p.stages.back().steps.push_back(f);
    }
    p.vals[p.fulls[f].out].stage = static_cast<int>(p.stages.size()) - 1;
  }
  if (p.stages.empty() || p.stages.back().call) p.stages.push_back(Stage{false, {}});
  const int final_stage = static_cast<int>(p.stages.size()) - 1;
  auto reads = [&](int s, int stage, bool call) {
    Val& v = p.vals[s];
    if (v.kind == Kind::full && v.stage != stage) v.temp = true;
    if (v.kind == Kind::view && (v.input < 0 ? call : !contiguous(v))) v.gather = true;
  };
  for (size_t si = 0; si < p.stages.size(); ++si)
    for (size_t f : p.stages[si].steps)
      for (int s : p.fulls[f].in) reads(s, static_cast<int>(si), p.stages[si].call);
  for (const Output& o : p.outputs)
    if (o.how == Store::full) reads(o.slot, final_stage, false);
  if (p.has_red) reads(p.red_in, final_stage, false);
  for (const Stage& st : p.stages)
    if (st.call) p.vals[p.fulls[st.steps[0]].out].temp = true;
  return p;
}

}  // namespace graft::codegen::cpu::detail
