// Kernels of host callbacks: hand the operand and result buffers to the C++
// function the node carries (the API layer wraps them as Arrays without
// copying). A callback read back from JSON has no function to call.
#include "graft/errors.h"
#include "interpreter/kernel.h"
#include "ir/host_callback.h"

namespace graft::interpreter {

namespace {

void run_callback(const KernelCall& call) {
  const ir::HostCallbackPtr& cb = ir::attr<ir::HostCallbackPtr>(call.attrs, "callback", call.op);
  if (!cb) throw GraphFormatError(std::string(ir::op_name(call.op)) + ": null callback");
  if (!cb->call)
    throw UnsupportedError(std::string(ir::op_name(call.op)) + " '" + cb->name +
                           "': this graph was read from a file, and a C++ function cannot be: trace the "
                           "program again in this process to run it");
  std::vector<ir::ValueType> in_types, out_types;
  std::vector<const void*> ins;
  std::vector<void*> outs;
  for (const KernelIn& in : call.inputs) {
    in_types.push_back(*in.type);
    ins.push_back(in.data);
  }
  for (const KernelOut& out : call.outputs) {
    out_types.push_back(*out.type);
    outs.push_back(out.data);
  }
  cb->call(ir::HostCallbackCall{in_types, ins, out_types, outs});
}

}  // namespace

void pure_callback_kernel(const KernelCall& call) { run_callback(call); }
void io_callback_kernel(const KernelCall& call) { run_callback(call); }

}  // namespace graft::interpreter
