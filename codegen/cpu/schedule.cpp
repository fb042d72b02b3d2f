#include "codegen/cpu/schedule.h"

#include <algorithm>

#include "codegen/cpu/cpp_text.h"
#include "codegen/cpu/elementwise.h"
#include "interpreter/kernels/ordered_sum.h"

namespace graft::codegen::cpu::detail {
namespace {

using ir::FusedStep;
using ir::FusedValue;
using ir::Node;
using ir::Op;
using ir::OutputStore;
using ir::ValueClass;

std::string op_str(Op op) { return std::string(ir::op_name(op)); }

// The operands' dtype of an elementwise node (select: the branches').
DType operand_dtype(const ir::Graph& g, const Node& n) { return g.type(n.inputs[n.op == Op::select ? 1 : 0]).dtype; }

// What the emitter refuses of a planned body, node by node.
void check_nodes(const ir::Graph& g, const Schedule& s, const Node* trailing, OpExprFn expr) {
  const ir::FusedPlan& p = s.plan;
  for (const Node& node : g.nodes()) {
    if (&node == trailing) continue;
    const ir::ValueType& ot = g.type(node.outputs[0]);
    const FusedValue& v = p.of(node.outputs[0]);
    if (node.op == Op::constant) {
      if (v.count != 1)
        fail(cat("constant ", ir::type_str(ot), " has ", num(v.count),
                 " elements; only one-element constants are kernel parameters (pass bigger ones as inputs)"));
      if (ir::dtype_size(ot.dtype) > 8) fail(cat("constant ", ir::type_str(ot), ": a kernel parameter holds 8 bytes"));
      continue;
    }
    if (node.op == Op::reshape || node.op == Op::broadcast_in_dim) {
      const FusedValue& src = p.of(node.inputs[0]);
      if (node.op == Op::reshape && src.cls == ValueClass::view && !ir::contiguous(src))
        fail("reshape of a broadcast input cannot be fused; broadcast the reshaped input instead");
      // A uniform repeating a value computed per element (below) to another size.
      if (v.cls == ValueClass::uniform && v.scalar != p.value_of[static_cast<size_t>(node.outputs[0])] &&
          p.value(v.scalar).count != 1)
        fail(cat(op_str(node.op), " of a computed value to ", ir::type_str(ot), ": only body inputs may be broadcast"));
      continue;
    }
    if (ir::is_reduction(node.op)) {
      if (emits_reduction(node.op)) fail(cat(op_str(node.op), " must be the body's last node (and an output)"));
      fail(cat(op_str(node.op), " cannot be fused into a CPU kernel"));
    }
    const DType dt = operand_dtype(g, node);
    if (!op_math_fn(node.op, dt))
      expr(node.op, dt, ot.dtype, std::vector<std::string>(node.inputs.size(), "x"));  // throws when no kernel
    if (v.cls == ValueClass::uniform && v.count != 1 && v.count != p.N)
      fail(cat(op_str(node.op), " computes ", ir::type_str(ot), ", not the iteration space's ", num(p.N), " elements"));
  }
}

}  // namespace

Schedule schedule(const ir::Graph& g, OpExprFn expr) {
  Schedule s;
  s.plan = ir::plan_fused_body(g);
  const ir::FusedPlan& p = s.plan;
  if (!p.refused.empty()) fail(p.refused);

  // A trailing reduction the emitter can end the kernel with; one whose
  // result no output reads is dead and left out.
  const Node* trailing = nullptr;
  if (!g.nodes().empty() && emits_reduction(g.nodes().back().op)) {
    trailing = &g.nodes().back();
    for (size_t r = 0; r < p.reductions.size(); ++r)
      if (p.reductions[r].node == trailing && !p.reductions[r].outputs.empty()) s.red = static_cast<int>(r);
  }
  check_nodes(g, s, trailing, expr);

  // Values computed per element: full values, and ops on uniforms of more
  // than one element (as the interpreter's unfused kernels compute them, so a
  // math.h call gives each element the bits of its SIMD packet there).
  s.at.resize(p.values.size());
  for (size_t v = 0; v < p.values.size(); ++v) {
    const FusedValue& x = p.values[v];
    s.at[v].per_element = x.cls == ValueClass::full ||
                          (x.cls == ValueClass::uniform && x.count != 1 && x.scalar == static_cast<int>(v));
  }
  for (size_t i = 0; i < p.steps.size(); ++i) {
    const FusedStep& st = p.steps[i];
    ScheduledStep ss;
    ss.step = i;
    switch (st.what) {
      case FusedStep::input: s.once.push_back(ss); break;
      case FusedStep::constant:
        ss.scalar = s.num_scalars++;
        s.once.push_back(ss);
        break;
      case FusedStep::op:
        ss.math = op_math_fn(st.node->op, operand_dtype(g, *st.node));
        (s.at[static_cast<size_t>(st.out)].per_element ? s.per_element : s.once).push_back(ss);
        break;
      case FusedStep::reduction: break;  // the trailing one (the others were refused)
    }
  }

  bool any_loop_output = false;
  for (size_t pos = 0; pos < p.outputs.size(); ++pos) {
    const ir::FusedOutput& o = p.outputs[pos];
    if (o.store == OutputStore::none)
      fail(cat("output ", num(static_cast<int64_t>(pos)), " is a broadcast input of ", num(p.value(o.value).count),
               " elements, not the iteration space's ", num(p.N)));
    any_loop_output = any_loop_output || o.store == OutputStore::loop;
  }

  if (s.red >= 0) {
    const ir::FusedReduction& r = s.reduction();
    if (r.node->op == Op::reduce_sum && p.value(r.in).dtype == DType::bool_) fail("reduce_sum of bool has no kernel");
    if (ir::is_complex(p.value(r.in).dtype)) fail("a reduction of complex values runs on the interpreter");
    ir::OuterReducedInner form;
    if (interpreter::ordered_sum(r.node->op, p.value(r.in).dtype) && !ir::outer_reduced_inner(r.groups, &form))
      fail("a float sum over axes that are not adjacent runs on the interpreter (its order, sum_order.h, is for [outer, reduced, inner])");
    const FusedValue& rv = p.value(r.in);
    if (rv.cls == ValueClass::view && rv.count != p.N) fail("the reduction reads a broadcast input of the wrong size");
  }

  // Stages and what crosses them.
  s.has_loop = p.N > 0 && (any_loop_output || s.red >= 0);
  if (!s.has_loop) return s;
  for (size_t f = 0; f < s.per_element.size(); ++f) {
    if (s.per_element[f].math) {
      s.stages.push_back(Stage{true, {f}});
      s.has_calls = true;
    } else {
      if (s.stages.empty() || s.stages.back().call) s.stages.push_back(Stage{false, {}});
      s.stages.back().steps.push_back(f);
    }
    s.at[static_cast<size_t>(s.step(s.per_element[f]).out)].stage = static_cast<int>(s.stages.size()) - 1;
  }
  if (s.stages.empty() || s.stages.back().call) s.stages.push_back(Stage{false, {}});
  const int final_stage = static_cast<int>(s.stages.size()) - 1;
  auto reads = [&](int v, int stage, bool call) {
    const FusedValue& x = p.value(v);
    Placement& a = s.at[static_cast<size_t>(v)];
    if (a.per_element) {
      if (a.stage != stage) a.temp = true;
    } else if (x.cls == ValueClass::view) {
      if (!ir::contiguous(x)) a.gather = true;
    } else if (x.cls == ValueClass::uniform && x.count != 1 && call) {
      a.gather = true;  // a call reads an array: the scalar filled per block
    }
  };
  for (size_t si = 0; si < s.stages.size(); ++si)
    for (size_t f : s.stages[si].steps)
      for (int v : s.step(s.per_element[f]).in) reads(v, static_cast<int>(si), s.stages[si].call);
  for (const ir::FusedOutput& o : p.outputs)
    if (o.store == OutputStore::loop) reads(o.value, final_stage, false);
  if (s.red >= 0) reads(s.reduction().in, final_stage, false);
  for (const Stage& st : s.stages)
    if (st.call) s.at[static_cast<size_t>(s.step(s.per_element[st.steps[0]]).out)].temp = true;
  return s;
}

}  // namespace graft::codegen::cpu::detail
