// The C++ emitter's schedule of a fused body: its decisions on top of the
// body's plan (ir/fused_plan.h), which says what each value is. Here: which
// bodies the emitter takes, which values it computes once in the entry
// function and which per element, how per-element ops group into stages
// (inline loops and calls of math.h's functions), and which values cross
// stages or are gathered per block. emit.cpp turns a Schedule into C++.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "codegen/cpu/elementwise.h"
#include "codegen/cpu/math.h"
#include "ir/fused_plan.h"

namespace graft::codegen::cpu::detail {

// The reductions (ops.def) the C++ emitter can end a kernel with: a backend's
// capability, not an op fact; a body ending in another is refused and runs
// on the interpreter.
inline bool emits_reduction(ir::Op op) {
  return ir::is_reduction(op) && ir::codegen_kind(op) == ir::CodegenKind::emitted;
}

struct ScheduledStep {
  size_t step = 0;             // index into the plan's steps
  std::optional<MathFn> math;  // an op computed by a call of graft's function
  int scalar = -1;             // constant: its index in the kernel's scalars
};

struct Stage {
  bool call = false;          // one call of a math.h function on the block, else an inline loop
  std::vector<size_t> steps;  // indices into Schedule::per_element
};

// The emitter's view of one value of the plan.
struct Placement {
  bool per_element = false;  // computed per element (v<ord>, or t<ord>[] across stages)
  int stage = -1;            // per element: the stage computing it
  bool temp = false;         // kept in t<ord>[] for later stages
  bool gather = false;       // a view gathered (or a uniform filled) into g<ord>[] per block
};

struct Schedule {
  ir::FusedPlan plan;
  std::vector<Placement> at;  // by plan value
  std::vector<ScheduledStep> once, per_element;  // in the entry function / per element, in order
  std::vector<Stage> stages;
  int num_scalars = 0;
  bool has_loop = false, has_calls = false;
  int red = -1;  // the trailing reduction: its index in the plan's reductions, or -1

  int64_t N() const { return plan.N; }
  const ir::FusedValue& value(int v) const { return plan.value(v); }
  const ir::FusedStep& step(const ScheduledStep& s) const { return plan.steps[s.step]; }
  const ir::FusedReduction& reduction() const { return plan.reductions[static_cast<size_t>(red)]; }
};

// An emitter's expression of an elementwise op (elementwise.h's op_expr);
// throws UnsupportedError for one it has no code for.
using OpExprFn = std::string (*)(ir::Op op, DType dt, DType out, const std::vector<std::string>& a);

// The schedule of `body`; throws UnsupportedError when the emitter whose
// expressions `expr` writes cannot emit it.
Schedule schedule(const ir::Graph& body, OpExprFn expr = &op_expr);

}  // namespace graft::codegen::cpu::detail
