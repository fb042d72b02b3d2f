// The device-side runners of control_flow.h, with the interpreter's operand
// layout (ir/shape_rules/control.cpp) and loop structure
// (interpreter/kernels/control_flow.cpp): bodies never write into their
// inputs, so a body's result buffers become the next step's inputs without
// copying.
#include "codegen/cuda/control_flow.h"

#include <algorithm>
#include <cstdint>

#include "codegen/cuda/node_kernels.h"
#include "graft/errors.h"
#include "ir/attr_access.h"
#include "ir/dtype.h"
#include "runtime/device.h"

namespace graft::codegen::cuda {
namespace {

using Buffers = std::vector<runtime::BufferPtr>;
using interpreter::KernelCall;
using interpreter::NodeKernel;

size_t bytes_of(const ir::ValueType& t) { return static_cast<size_t>(t.num_elements()) * ir::dtype_size(t.dtype); }

runtime::Device& device_here() {
  runtime::Device& d = runtime::current_device();
  if (d.host_addressable())
    throw Error("cuda: control flow ran with " + d.name() + " as the current device, not a CUDA device");
  return d;
}

runtime::BufferPtr copy_within(runtime::DeviceTransfers& t, const void* src, size_t n) {
  runtime::BufferPtr b = runtime::make_buffer(n);
  if (n) t.within(b->data(), src, n);
  return b;
}

// Device copies of the call's operands [first, first + n).
Buffers copy_inputs(runtime::DeviceTransfers& t, const KernelCall& call, size_t first, size_t n) {
  Buffers out;
  out.reserve(n);
  for (size_t i = first; i < first + n; ++i) out.push_back(copy_within(t, call.inputs[i].data, bytes_of(*call.inputs[i].type)));
  return out;
}

void copy_out(runtime::DeviceTransfers& t, const runtime::BufferPtr& from, const interpreter::KernelOut& to) {
  if (const size_t n = bytes_of(*to.type)) t.within(to.data, from->data(), n);
}

Buffers run(const DeviceBody& body, const Buffers& inputs) {
  interpreter::EvaluateOptions options;
  options.node_kernels = &body.kernels->node_kernels;
  return interpreter::evaluate(*body.graph, inputs, options);
}

Buffers concat(const Buffers& a, const Buffers& b) {
  Buffers out(a);
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

int64_t int_attr(const ir::Node& n, const char* name) { return ir::attr<int64_t>(n.attrs, name, n.op); }

NodeKernel cond_runner(std::vector<DeviceBody> branches) {
  return [branches = std::move(branches)](const KernelCall& call) {
    runtime::DeviceTransfers& t = *device_here().transfers();
    const interpreter::KernelIn& index = call.inputs.at(0);
    int64_t i;
    if (index.type->dtype == DType::bool_) {
      uint8_t b = 0;
      t.to_host(&b, index.data, 1);
      i = b != 0 ? 1 : 0;
    } else {
      int32_t v = 0;
      t.to_host(&v, index.data, sizeof v);
      i = std::clamp<int64_t>(v, 0, static_cast<int64_t>(branches.size()) - 1);
    }
    const Buffers outs = run(branches[static_cast<size_t>(i)], copy_inputs(t, call, 1, call.inputs.size() - 1));
    for (size_t k = 0; k < outs.size(); ++k) copy_out(t, outs[k], call.outputs[k]);
  };
}

NodeKernel while_runner(DeviceBody cond, DeviceBody body, size_t cn, size_t bn) {
  return [cond = std::move(cond), body = std::move(body), cn, bn](const KernelCall& call) {
    runtime::DeviceTransfers& t = *device_here().transfers();
    const size_t nc = call.inputs.size() - cn - bn;
    const Buffers cconsts = copy_inputs(t, call, 0, cn);
    const Buffers bconsts = copy_inputs(t, call, cn, bn);
    Buffers carry = copy_inputs(t, call, cn + bn, nc);
    for (;;) {
      const Buffers pred = run(cond, concat(cconsts, carry));
      uint8_t go = 0;
      t.to_host(&go, pred.at(0)->data(), 1);  // the one value the host needs
      if (go == 0) break;
      carry = run(body, concat(bconsts, carry));
    }
    for (size_t k = 0; k < nc; ++k) copy_out(t, carry[k], call.outputs[k]);
  };
}

NodeKernel scan_runner(DeviceBody body, size_t nk, size_t nc, int64_t length, bool reverse) {
  return [body = std::move(body), nk, nc, length, reverse](const KernelCall& call) {
    runtime::DeviceTransfers& t = *device_here().transfers();
    const size_t nx = call.inputs.size() - nk - nc;
    const size_t ny = call.outputs.size() - nc;
    Buffers inputs = copy_inputs(t, call, 0, nk + nc);  // consts, then the carry
    inputs.resize(nk + nc + nx);
    std::vector<size_t> x_row(nx), y_row(ny);  // bytes of one row of each xs and ys
    if (length > 0) {
      for (size_t j = 0; j < nx; ++j) x_row[j] = bytes_of(*call.inputs[nk + nc + j].type) / static_cast<size_t>(length);
      for (size_t j = 0; j < ny; ++j) y_row[j] = bytes_of(*call.outputs[nc + j].type) / static_cast<size_t>(length);
    }
    for (int64_t step = 0; step < length; ++step) {
      const size_t i = static_cast<size_t>(reverse ? length - 1 - step : step);
      for (size_t j = 0; j < nx; ++j)
        inputs[nk + nc + j] =
            copy_within(t, static_cast<const char*>(call.inputs[nk + nc + j].data) + i * x_row[j], x_row[j]);
      const Buffers outs = run(body, inputs);
      for (size_t j = 0; j < nc; ++j) inputs[nk + j] = outs[j];
      for (size_t j = 0; j < ny; ++j)
        if (y_row[j]) t.within(static_cast<char*>(call.outputs[nc + j].data) + i * y_row[j], outs[nc + j]->data(), y_row[j]);
    }
    for (size_t j = 0; j < nc; ++j) copy_out(t, inputs[nk + j], call.outputs[j]);
  };
}

}  // namespace

bool runs_bodies_on_device(ir::Op op) {
  return op == ir::Op::cond || op == ir::Op::while_ || op == ir::Op::scan || op == ir::Op::custom_jvp_call ||
         op == ir::Op::custom_vjp_call || op == ir::Op::remat;
}

std::vector<ir::GraphPtr> device_bodies(const ir::Node& n) {
  auto one = [&](const char* name) { return ir::attr<ir::Graphs>(n.attrs, name, n.op).at(0); };
  switch (n.op) {
    case ir::Op::cond: return ir::attr<ir::Graphs>(n.attrs, "branches", n.op);
    case ir::Op::while_: return {one("cond"), one("body")};
    case ir::Op::scan: case ir::Op::remat: return {one("body")};
    case ir::Op::custom_jvp_call: case ir::Op::custom_vjp_call: return {one("call")};
    default: throw Error(std::string("cuda: ") + std::string(ir::op_name(n.op)) + " has no device bodies");
  }
}

NodeKernel graph_call_runner(DeviceBody body) {
  return [body = std::move(body)](const KernelCall& call) {
    runtime::DeviceTransfers& t = *device_here().transfers();
    const Buffers outs = run(body, copy_inputs(t, call, 0, call.inputs.size()));
    for (size_t k = 0; k < call.outputs.size(); ++k) copy_out(t, outs[k], call.outputs[k]);
  };
}

NodeKernel control_flow_runner(const ir::Node& n, std::vector<DeviceBody> bodies) {
  switch (n.op) {
    case ir::Op::cond: return cond_runner(std::move(bodies));
    case ir::Op::while_:
      return while_runner(std::move(bodies.at(0)), std::move(bodies.at(1)),
                          static_cast<size_t>(int_attr(n, "cond_nconsts")), static_cast<size_t>(int_attr(n, "body_nconsts")));
    case ir::Op::scan:
      return scan_runner(std::move(bodies.at(0)), static_cast<size_t>(int_attr(n, "num_consts")),
                         static_cast<size_t>(int_attr(n, "num_carry")), int_attr(n, "length"), int_attr(n, "reverse") != 0);
    default: return graph_call_runner(std::move(bodies.at(0)));
  }
}

}  // namespace graft::codegen::cuda
