// How graph nodes and eager ops run on a CUDA device (the thread's current
// device, runtime::current_device(), which must be a CUDA device):
//   - a fusion node, or one node the CUDA emitter takes alone (an
//     elementwise op, a broadcast or reshape, a reduction): its generated
//     kernel (emit.h), launched on the device's stream;
//   - dot_general: one cuBLAS strided-batched GEMM (dot_general.h);
//   - transpose, rev, slice, pad, concatenate: strided copies by one
//     generic kernel per element size (movement.h);
//   - constant: its bytes copied to the device;
//   - every other node, and a body the emitter refuses: on the host. Its
//     operands are copied to host buffers, the interpreter's kernel runs
//     (control flow runs its bodies there too), and its results are copied
//     back. Correct everywhere, and slow: host_reason(op) says why an op
//     takes this path until it has a CUDA kernel.
#pragma once

#include <string>
#include <vector>

#include "codegen/cuda/emit.h"
#include "interpreter/evaluate.h"
#include "ir/graph.h"

namespace graft::codegen::cuda {

struct CudaGraphKernels {
  std::vector<interpreter::NodeKernel> node_kernels;  // one per node of the graph
  int64_t generated = 0;                              // nodes run on the GPU: generated kernels and cuBLAS GEMMs
  int64_t distinct = 0;                               // distinct generated kernel sources
  std::vector<std::string> on_host;                   // each node run on the host, and why
  std::string source;                                 // the distinct kernels' CUDA source
};

// The kernels of every node of `graph`. `host_kernels` (by node index, may
// be null or hold empty entries) replace the interpreter's kernel for nodes
// run on the host (jit's compiled pmap bodies). `sizes`: how the generated
// kernels of its nodes take their sizes (emit.h; a shape-polymorphic
// program's instances take them as parameters, to share their kernels).
CudaGraphKernels cuda_graph_kernels(const ir::Graph& graph,
                                    const std::vector<interpreter::NodeKernel>* host_kernels = nullptr,
                                    Sizes sizes = Sizes::literals);

// Runs one eager op whose operand and result buffers are on the current
// CUDA device; its kernel is emitted once per (op, attributes, types).
void run_eager_op(const interpreter::KernelCall& call);

// Nodes and eager ops run so far in this process: by generated kernels
// (launches) and on the host through copies.
struct CudaRunCounts {
  int64_t launches = 0;
  int64_t host_runs = 0;
};
CudaRunCounts run_counts();

// Why `op` runs on the host rather than in a CUDA kernel (empty when a
// generated kernel runs it alone; some shapes may still be refused).
std::string host_reason(ir::Op op);

}  // namespace graft::codegen::cuda
