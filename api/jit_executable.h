// The executable jit runs (api/jit.cpp), shared with the shape-polymorphic
// executable (api/jit_polymorphic.cpp), which builds one per size it meets.
// Internal to the api layer.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "codegen/cpu/background_compile.h"
#include "codegen/cpu/fused_graph.h"
#include "codegen/cuda/node_kernels.h"
#include "codegen/memory_plan.h"
#include "graft/jit.h"
#include "interpreter/evaluate.h"
#include "ir/graph.h"
#include "runtime/allocation_site.h"
#include "runtime/device.h"

namespace graft::detail {

struct PolymorphicExecutable;  // api/jit_polymorphic.h

struct Executable {
  ir::GraphPtr graph;        // simplified
  int64_t nodes_before = 0;  // in the traced graph
  Backend backend = Backend::interpreter;
  CostAnalysis cost;
  MemoryAnalysis memory;
  std::vector<int64_t> donation_plan;  // per input: the output its buffer backs, or -1
  // Ref arguments (graft/ref.h): their graph inputs, whose final values are
  // the last outputs, and whether each is written in place (else copied in).
  std::vector<size_t> ref_inputs;
  std::vector<bool> ref_in_place;
  // Backend::cpu: the fusion nodes' generated kernels, once compiled (tiered execution).
  std::shared_ptr<const codegen::cpu::PendingKernels> cpu;
  codegen::MemoryPlan plan;                       // where the temporaries live in the per-call arena
  const runtime::AllocationSite* site = nullptr;  // the arena's provenance: the function's first line
  // The constants it holds, shown in memory profiles as kind "executable".
  std::unique_ptr<runtime::ExecutableMemory> held;
  // By node index, for pmap nodes: their bodies run compiled on each replica (empty: no pmap node).
  std::vector<interpreter::NodeKernel> pmap_kernels;
  // Backend::cuda: every node's kernel on a CUDA device (generated or run on the host).
  std::shared_ptr<const codegen::cuda::CudaGraphKernels> cuda;
  // Those and the cpu module's kernels together, merged once the module is loaded.
  mutable std::once_flag merged_once;
  mutable std::vector<interpreter::NodeKernel> merged_kernels;
  // Shape-polymorphic: every call runs the instance of its sizes (graph and the rest describe the first sample).
  std::shared_ptr<PolymorphicExecutable> poly;
  // An instance of a polymorphic executable: the first sample's compiled kernels its fusion nodes can use.
  std::shared_ptr<const codegen::cpu::FusedGraphKernels> rebound;
};

// The executable of a graph that simplification and fusion have produced
// (`clean` is the graph before fusion, for flop counts): donation, memory
// plan, analyses, and the backend's kernels (compile_kernels false: none,
// for an instance of a polymorphic executable, which binds its own, and
// whose constants the first sample's executable already counts in memory profiles).
std::shared_ptr<Executable> executable_of_fused(ir::GraphPtr fused, const ir::Graph& clean, int64_t nodes_before,
                                                Backend backend, const JitOptions& options,
                                                const std::vector<bool>& donated, bool compile_kernels);
// By node index, for the pmap nodes of g: their bodies compiled like any jit
// program, each run by every replica of the node (empty: no pmap node).
std::vector<interpreter::NodeKernel> pmap_kernels(const ir::Graph& g, const JitOptions& options);
// Ref arguments at leaves `ref_inputs` (donated: graph outputs after the
// others hold their final values): which of them the plan writes in place.
void attach_refs(Executable& exe, const std::vector<size_t>& ref_inputs);
// Tiered execution: the cpu module of `graph` compiles on the background
// worker unless the caller waits for it (or every module is on disk). A
// background failure is reported once and the executable stays on the interpreter.
std::shared_ptr<const codegen::cpu::PendingKernels> start_cpu_compile(const ir::GraphPtr& graph, bool wait);
// Simplification, constant folding, remat inlining and fusion: what jit does to a traced graph.
struct JitPasses {
  ir::GraphPtr clean;  // before fusion
  ir::GraphPtr fused;
};
JitPasses run_jit_passes(const ir::Graph& traced, const std::vector<bool>& donated);
// Backend::automatic and the others resolved to what this process can run.
Backend resolve_backend(Backend b);

}  // namespace graft::detail
