// What a Ref handle points to (graft/ref.h).
#pragma once

#include <memory>
#include <vector>

#include "graft/array.h"
#include "graft/make_graph.h"
#include "ir/trace.h"

namespace graft::detail {

struct RefState {
  // The value inside a loop body (scan, fori_loop, while_loop) that carries
  // the Ref: reads there and in traces nested in it see it.
  struct Overlay {
    const ir::Trace* trace;
    Array value;
  };
  Array value;                       // eagerly: owns the Ref's one buffer; traced: the current value
  ir::TracePtr home;                 // the trace the Ref belongs to; null for an eager Ref
  std::shared_ptr<RefState> target;  // for a jit argument's stand-in: the caller's Ref
  ir::ValueId input = -1;            // for a stand-in: the trace input it started from
  std::vector<Overlay> overlays;     // innermost last
  bool frozen = false;               // freeze() was called
};

// The innermost TraceSession of this thread, or null (Ref arguments register with it).
TraceSession* current_session();
// Whether `trace` and every trace enclosing it are loop bodies that carry
// Refs: code there runs when the loop is made, so it may use an eager Ref.
bool carrying_to_root(const ir::Trace* trace);
// The Ref's value as code running in `trace` sees it (its innermost overlay there, else its value).
const Array& visible_value(const RefState& state, const ir::Trace* trace);

}  // namespace graft::detail
