// CPU kernels of calls that carry user rules or a recompute marker: running
// them means running the wrapped function's graph ("call" for custom_jvp_call
// and custom_vjp_call, "body" for remat).
#include <cstring>

#include "interpreter/evaluate.h"
#include "interpreter/kernels/loops.h"

namespace graft::interpreter {
namespace {

void call_kernel(const KernelCall& call) {
  const char* name = call.op == ir::Op::remat ? "body" : "call";
  const ir::Graph& body = *std::get<ir::Graphs>(*call.attrs.find(name)).at(0);
  // The kernel sees raw operand memory; the graph walker wants owned buffers.
  std::vector<runtime::BufferPtr> inputs;
  for (const KernelIn& in : call.inputs) {
    size_t bytes = static_cast<size_t>(in.type->num_elements()) * ir::dtype_size(in.type->dtype);
    runtime::BufferPtr b = runtime::make_buffer(bytes);
    if (bytes) std::memcpy(b->data(), in.data, bytes);
    inputs.push_back(b);
  }
  std::vector<runtime::BufferPtr> outputs = evaluate(body, inputs);
  for (size_t k = 0; k < outputs.size(); ++k) {
    size_t bytes = static_cast<size_t>(call.outputs[k].type->num_elements()) * ir::dtype_size(call.outputs[k].type->dtype);
    if (bytes) std::memcpy(call.outputs[k].data, outputs[k]->data(), bytes);
  }
}

// custom_lin stands for the unknown forward derivative of a custom_vjp
// function; reverse mode transposes it away, so reaching it here means jvp.
void custom_lin_kernel(const KernelCall&) {
  throw UnsupportedError(
      "custom_lin: a custom_vjp function has no forward-mode derivative (jvp, jacfwd); use grad, vjp or jacrev, or "
      "give it a custom_jvp rule");
}

}  // namespace

void register_custom_kernels(KernelTable& t) {
  t[static_cast<size_t>(ir::Op::custom_lin)] = custom_lin_kernel;
  t[static_cast<size_t>(ir::Op::custom_jvp_call)] = call_kernel;
  t[static_cast<size_t>(ir::Op::custom_vjp_call)] = call_kernel;
  t[static_cast<size_t>(ir::Op::remat)] = call_kernel;
}

}  // namespace graft::interpreter
