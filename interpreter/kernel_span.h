// A profiler span around one kernel (runtime/trace_events.h): a jit
// executable's node or an eager op, named by its op (a fused kernel by the
// ops it fuses), its kind the op's family in ops.def (fusion, linalg, conv,
// shape, callback, ...), with its shapes, bytes, flops and the user's line.
// Nothing is computed while no trace is on.
#pragma once

#include <string>

#include "interpreter/kernel.h"
#include "ir/graph.h"

namespace graft::interpreter {

class KernelSpan {
 public:
  // Node `n` of `graph`, about to run as `call`.
  KernelSpan(const ir::Graph& graph, const ir::Node& n, const KernelCall& call);
  // An eager op (no graph node): named "<op> (eager)".
  KernelSpan(const KernelCall& call, const ir::SourceLoc& loc);
  ~KernelSpan();
  KernelSpan(const KernelSpan&) = delete;
  KernelSpan& operator=(const KernelSpan&) = delete;

 private:
  bool on_ = false;
  double start_us_ = 0;
  std::string name_, args_;
  const char* kind_ = "";
};

}  // namespace graft::interpreter
