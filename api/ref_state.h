// What a Ref handle points to (graft/ref.h).
#pragma once

#include <memory>

#include "graft/array.h"
#include "graft/make_graph.h"
#include "ir/trace.h"

namespace graft::detail {

struct RefState {
  Array value;                       // eagerly: owns the Ref's one buffer; traced: the current value
  ir::TracePtr home;                 // the trace the Ref belongs to; null for an eager Ref
  std::shared_ptr<RefState> target;  // for a jit argument's stand-in: the caller's Ref
  ir::ValueId input = -1;            // for a stand-in: the trace input it started from
  bool frozen = false;               // freeze() was called
};

// The innermost TraceSession of this thread, or null (Ref arguments register with it).
TraceSession* current_session();

}  // namespace graft::detail
