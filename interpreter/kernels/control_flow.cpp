// CPU kernels of control flow: cond runs one branch's graph, while and scan
// run their body graphs in a loop, as interpreter/control_flow_steps.h steps
// them, in host memory.
#include <cstring>

#include "interpreter/control_flow_steps.h"
#include "interpreter/evaluate.h"
#include "interpreter/kernels/loops.h"
#include "ir/attr_access.h"
#include "runtime/device.h"

namespace graft::interpreter {
namespace {

const ControlFlowMemory& host_memory() {
  static const ControlFlowMemory m{[](const void* src, size_t bytes) {
                                     runtime::BufferPtr b = runtime::make_buffer(bytes);
                                     if (bytes) std::memcpy(b->data(), src, bytes);
                                     return b;
                                   },
                                   [](void* dst, const void* src, size_t bytes) { std::memcpy(dst, src, bytes); },
                                   [](void* dst, const void* src, size_t bytes) { std::memcpy(dst, src, bytes); },
                                   [](const void* src, size_t bytes) {
                                     // Bodies never write an operand they are not donated, so it is viewed in place.
                                     return std::make_shared<runtime::Buffer>(runtime::Buffer::Borrowed{},
                                                                              const_cast<void*>(src), bytes,
                                                                              runtime::host_device());
                                   }};
  return m;
}

// Runs subgraph k of the attribute(s) named.
RunBody runner(const std::vector<const ir::Graph*>& bodies) {
  return [bodies](size_t k, const Buffers& inputs, const std::vector<bool>& donated) {
    return donated.empty() ? evaluate(*bodies.at(k), inputs) : evaluate(*bodies.at(k), inputs, donated, nullptr);
  };
}

const ir::Graph* graph_attr(const KernelCall& call, const char* name) {
  return ir::attr<ir::Graphs>(call.attrs, name, call.op).at(0).get();
}

}  // namespace

void cond_kernel(const KernelCall& call) {
  std::vector<const ir::Graph*> branches;
  for (const ir::GraphPtr& g : ir::attr<ir::Graphs>(call.attrs, "branches", call.op)) branches.push_back(g.get());
  run_cond(call, branches.size(), host_memory(), runner(branches));
}

void while_loop_kernel(const KernelCall& call) {
  run_while(call, host_memory(), runner({graph_attr(call, "cond"), graph_attr(call, "body")}));
}

void scan_kernel(const KernelCall& call) { run_scan(call, host_memory(), runner({graph_attr(call, "body")})); }

}  // namespace graft::interpreter
