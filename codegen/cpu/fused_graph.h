// Backend::cpu for a fused graph: every fusion node whose body the emitter
// accepts becomes a kernel of one module (one compile per executable, cached
// by its source); the other nodes keep the interpreter's kernels.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "interpreter/evaluate.h"
#include "ir/graph.h"

namespace graft::codegen::cpu {

struct FusedGraphKernels {
  std::vector<interpreter::NodeKernel> node_kernels;  // by node index; empty: the interpreter's kernel
  std::string source;                                 // the module's C++ source ("" when nothing compiled)
  int64_t compiled = 0;                               // fusion nodes run by generated code
  std::vector<std::string> refused;                   // why the other fusion nodes were not emitted
};

// Emits, compiles (or finds in the caches) and loads the kernels of `graph`'s
// fusion nodes. Throws graft::Error when the compiler fails.
FusedGraphKernels compile_fused_graph(const ir::Graph& graph);

}  // namespace graft::codegen::cpu
