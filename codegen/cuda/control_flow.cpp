// The device-side runners of control_flow.h: the steps of
// interpreter/control_flow_steps.h with device memory, and bodies evaluated
// with their CUDA kernels.
#include "codegen/cuda/control_flow.h"

#include <cstdint>

#include "codegen/cuda/node_kernels.h"
#include "graft/errors.h"
#include "interpreter/control_flow_steps.h"
#include "ir/attr_access.h"
#include "ir/dtype.h"
#include "runtime/device.h"

namespace graft::codegen::cuda {
namespace {

using interpreter::Buffers;
using interpreter::KernelCall;
using interpreter::NodeKernel;

runtime::DeviceTransfers& transfers_here() {
  runtime::Device& d = runtime::current_device();
  if (d.host_addressable())
    throw Error("cuda: control flow ran with " + d.name() + " as the current device, not a CUDA device");
  return *d.transfers();
}

// Memory of the current CUDA device: copies stay on it, reads come back.
interpreter::ControlFlowMemory device_memory(runtime::DeviceTransfers& t) {
  return {[&t](const void* src, size_t bytes) {
            runtime::BufferPtr b = runtime::make_buffer(bytes);
            if (bytes) t.within(b->data(), src, bytes);
            return b;
          },
          [&t](void* dst, const void* src, size_t bytes) { t.within(dst, src, bytes); },
          [&t](void* dst, const void* src, size_t bytes) { t.to_host(dst, src, bytes); },
          nullptr};  // no views: operands are copied on the device
}

Buffers run(const DeviceBody& body, const Buffers& inputs) {
  interpreter::EvaluateOptions options;
  options.node_kernels = &body.kernels->node_kernels;
  return interpreter::evaluate(*body.graph, inputs, options);
}

}  // namespace

bool runs_bodies_on_device(ir::Op op) { return ir::codegen_kind(op) == ir::CodegenKind::device_bodies; }

std::vector<ir::GraphPtr> device_bodies(const ir::Node& n) {
  auto one = [&](const char* name) { return ir::attr<ir::Graphs>(n.attrs, name, n.op).at(0); };
  switch (n.op) {
    case ir::Op::cond: return ir::attr<ir::Graphs>(n.attrs, "branches", n.op);
    case ir::Op::while_loop: return {one("cond"), one("body")};
    case ir::Op::scan: case ir::Op::remat: return {one("body")};
    case ir::Op::custom_jvp_call: case ir::Op::custom_vjp_call: return {one("call")};
    case ir::Op::linear_call: return {one("fun")};
    default: throw Error(std::string("cuda: ") + std::string(ir::op_name(n.op)) + " has no device bodies");
  }
}

NodeKernel graph_call_runner(DeviceBody body) {
  return [body = std::move(body)](const KernelCall& call) {
    const interpreter::ControlFlowMemory m = device_memory(transfers_here());
    Buffers ins;
    for (const interpreter::KernelIn& in : call.inputs) ins.push_back(m.copy_in(in.data, in.type->num_bytes()));
    const Buffers outs = run(body, ins);
    for (size_t k = 0; k < call.outputs.size(); ++k)
      if (const size_t n = call.outputs[k].type->num_bytes()) m.copy(call.outputs[k].data, outs[k]->data(), n);
  };
}

NodeKernel control_flow_runner(const ir::Node& n, std::vector<DeviceBody> bodies) {
  if (n.op != ir::Op::cond && n.op != ir::Op::while_loop && n.op != ir::Op::scan) return graph_call_runner(std::move(bodies.at(0)));
  return [op = n.op, bodies = std::move(bodies)](const KernelCall& call) {
    const interpreter::ControlFlowMemory m = device_memory(transfers_here());
    const interpreter::RunBody body = [&bodies](size_t k, const Buffers& inputs, const std::vector<bool>&) {
      return run(bodies.at(k), inputs);
    };
    if (op == ir::Op::cond) interpreter::run_cond(call, bodies.size(), m, body);
    else if (op == ir::Op::while_loop) interpreter::run_while(call, m, body);
    else interpreter::run_scan(call, m, body);
  };
}

}  // namespace graft::codegen::cuda
