// Control flow and graph calls on a CUDA device, as XLA runs them: cond,
// while and scan step from the host, and each body (a branch, a loop's
// condition and body, the graph a custom_jvp_call, custom_vjp_call, remat,
// linear_call or a fusion the emitter refuses calls) runs with its own CUDA kernels
// (cuda_graph_kernels, node_kernels.h) on device buffers. Only a cond's
// index and a while's predicate travel to the host: one small copy per
// decision, which waits for the device's queued work. Operands, carries,
// scan rows and results are copied within device memory.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "interpreter/evaluate.h"
#include "ir/graph.h"

namespace graft::codegen::cuda {

struct CudaGraphKernels;

// A subgraph and the kernels of its nodes.
struct DeviceBody {
  ir::GraphPtr graph;
  std::shared_ptr<const CudaGraphKernels> kernels;
};

// Whether `op` runs its subgraphs on the device here: cond, while, scan,
// custom_jvp_call, custom_vjp_call, remat and linear_call.
bool runs_bodies_on_device(ir::Op op);

// The subgraphs of such a node that it runs, in the order its runner takes
// them: the branches (cond); cond, then body (while); body (scan); the
// called graph (the calls).
std::vector<ir::GraphPtr> device_bodies(const ir::Node& node);

// The kernel of such a node, its bodies compiled (device_bodies order).
interpreter::NodeKernel control_flow_runner(const ir::Node& node, std::vector<DeviceBody> bodies);

// A call of one graph on the device: the call's operands are the graph's
// inputs, its results the graph's outputs.
interpreter::NodeKernel graph_call_runner(DeviceBody body);

}  // namespace graft::codegen::cuda
