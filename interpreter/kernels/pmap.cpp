// CPU kernel of pmap: the body run once per device of this process, each
// replica on its device's thread with its slice of the mapped operands,
// collectives spanning every process's replicas; the replicas' results are
// stacked into the node's outputs.
#include <cstring>
#include <string>

#include "graft/errors.h"
#include "interpreter/axis_slices.h"
#include "interpreter/evaluate.h"
#include "interpreter/kernel.h"
#include "interpreter/pmap_call.h"
#include "ir/dtype.h"
#include "runtime/buffer.h"
#include "runtime/communicator.h"
#include "runtime/device.h"
#include "runtime/processes.h"
#include "runtime/replicas.h"

namespace graft::interpreter {
namespace {

// Slice r of `whole` along its mapped dimension, into a buffer of this thread's device.
runtime::BufferPtr take_slice(const KernelIn& whole, int64_t d, int64_t r) {
  if (d < 0) {  // replicated: every replica gets its own copy, on its own device
    runtime::BufferPtr b = runtime::make_buffer(whole.type->num_bytes());
    if (b->size()) std::memcpy(b->data(), whole.data, b->size());
    return b;
  }
  const AxisSlices slices = axis_slices(*whole.type, d);
  runtime::BufferPtr b = runtime::make_buffer(slices.outer * slices.inner);
  copy_slice_out(whole.data, b->data(), slices, static_cast<size_t>(r));
  return b;
}

// Replica r's result written at index r of the output's stacking dimension.
// The copy reads the result on the host: a result in a GPU's memory is a
// wrongly compiled body, refused here because the emulated driver's device
// memory is host memory and would read without a fault.
void put_slice(const runtime::Buffer& part, const KernelOut& whole, int64_t d, int64_t r) {
  if (part.size() && !part.device().host_addressable())
    throw Error("pmap: replica " + std::to_string(r) + " returned a result in " + part.device().name() +
                "'s memory, which the host cannot read; the body must be compiled for the host (an internal error)");
  if (d < 0) {
    if (r == 0 && part.size()) std::memcpy(whole.data, part.data(), part.size());
    return;
  }
  copy_slice_in(part.data(), whole.data, axis_slices(*whole.type, d), static_cast<size_t>(r));
}

// This process's devices for the node's replicas.
std::vector<runtime::Device*> replica_devices(const KernelCall& call, int64_t n) {
  const runtime::Processes& procs = runtime::processes();
  const ir::Ints& ids = ints_attr(call, "devices");
  const std::vector<runtime::Device*>& local = runtime::devices();
  std::vector<runtime::Device*> out;
  for (int64_t r = 0; r < n; ++r) {
    int64_t index = r;  // the default: the first n devices of each process
    if (!ids.empty()) {
      const int64_t id = ids[static_cast<size_t>(procs.index * n + r)];
      if (runtime::process_of_device(static_cast<int>(id)) != procs.index)
        throw Error("pmap: device cpu:" + std::to_string(id) + " (replica " + std::to_string(procs.index * n + r) +
                    ") is not a device of this process (" + std::to_string(procs.index) + ")");
      index = id - runtime::global_device_id(procs.index, 0);
    }
    if (index >= static_cast<int64_t>(local.size()))
      throw ShapeError("pmap: the program runs " + std::to_string(n) + " replicas per process but this process has " +
                       std::to_string(local.size()) +
                       " device(s); one replica runs per device (set GRAFT_CPU_DEVICES for more virtual CPU devices)");
    out.push_back(local[static_cast<size_t>(index)]);
  }
  return out;
}

}  // namespace

void pmap_kernel(const KernelCall& call) {
  const ir::Graph& body = *ir::attr<ir::Graphs>(call.attrs, "body", call.op).at(0);
  run_pmap_call(call, [&body](const std::vector<runtime::BufferPtr>& inputs) { return evaluate(body, inputs); });
}

void run_pmap_call(const KernelCall& call, const ReplicaBody& body) {
  const std::string& axis_name = ir::attr<std::string>(call.attrs, "axis_name", call.op);
  const int64_t n = int_attr(call, "mapped_size");
  const int64_t total = int_attr(call, "axis_size");
  const ir::Ints& in_dims = ints_attr(call, "in_dims");
  const ir::Ints& out_dims = ints_attr(call, "out_dims");
  const runtime::Processes& procs = runtime::processes();
  if (runtime::current_replica())
    throw UnsupportedError("pmap: a pmap program cannot run inside a replica of another pmap (nested pmap needs a "
                           "device per inner replica); a pmap traced inside another pmap's function runs as vmap");
  if (total != n * procs.count)
    throw ShapeError("pmap: the program was traced for " + std::to_string(total) + " replicas, " + std::to_string(n) +
                     " per process, but runs in " + std::to_string(procs.count) + " process(es)");
  const std::vector<runtime::Device*> targets = replica_devices(call, n);
  runtime::run_replicas(targets, procs.index * static_cast<int>(n), axis_name, [&](size_t r) {
    std::vector<runtime::BufferPtr> inputs;
    for (size_t i = 0; i < call.inputs.size(); ++i)
      inputs.push_back(take_slice(call.inputs[i], in_dims[i], static_cast<int64_t>(r)));
    std::vector<runtime::BufferPtr> outputs = body(inputs);
    // Each replica writes its own slices of the outputs: disjoint bytes.
    for (size_t k = 0; k < outputs.size(); ++k) put_slice(*outputs[k], call.outputs[k], out_dims[k], static_cast<int64_t>(r));
  });
}

}  // namespace graft::interpreter
