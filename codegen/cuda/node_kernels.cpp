#include "codegen/cuda/node_kernels.h"

#include <atomic>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "codegen/cpu/schedule.h"
#include "codegen/cuda/control_flow.h"
#include "codegen/cuda/cuda_devices.h"
#include "codegen/cuda/dot_general.h"
#include "codegen/cuda/driver.h"
#include "codegen/cuda/fft.h"
#include "codegen/cuda/linalg.h"
#include "codegen/cuda/movement.h"
#include "codegen/cuda/op_kernels.h"
#include "graft/errors.h"
#include "interpreter/kernel.h"
#include "ir/attr_access.h"
#include "ir/builder.h"
#include "ir/dtype.h"
#include "ir/text.h"
#include "runtime/device.h"

namespace graft::codegen::cuda {
namespace {

using interpreter::KernelCall;
using interpreter::NodeKernel;

std::atomic<int64_t> g_launches{0}, g_host_runs{0};

// Whether `op` runs through a CUDA library here: cuSOLVER, cuBLAS's trsm or cuFFT.
bool has_library_kernel(ir::Op op) { return has_solver_kernel(op) || op == ir::Op::fft; }

// Its kernel, or nullopt with `*why` (when given) saying why it is refused.
std::optional<SolverKernel> library_kernel(const OpKernelRequest& request, std::string* why) {
  return request.op == ir::Op::fft ? fft_kernel(request, why) : solver_kernel(request, why);
}

// The kernel of a body, its symbol named after its source so that equal
// kernels (constants are parameters) share one module in every cache.
CudaKernel emit_named(const ir::Graph& body, Sizes sizes = Sizes::literals) {
  static const std::string kPlaceholder = "gk_symbol_placeholder";
  CudaKernel k = emit_kernel(body, kPlaceholder, sizes);
  name_after_source(&k, kPlaceholder);
  return k;
}

// Launches `kernel` on the current CUDA device with the call's buffers.
NodeKernel launcher(std::shared_ptr<const CudaKernel> kernel) {
  return [kernel](const KernelCall& call) {
    runtime::Device& device = cuda_device_here("a generated kernel");
    std::vector<const void*> ins;
    std::vector<void*> outs;
    ins.reserve(call.inputs.size());
    outs.reserve(call.outputs.size());
    for (const interpreter::KernelIn& in : call.inputs) ins.push_back(in.data);
    for (const interpreter::KernelOut& out : call.outputs) outs.push_back(out.data);
    for (const auto& [j, k] : kernel->copy_before) {
      const size_t n = call.outputs[static_cast<size_t>(k)].type->num_bytes();
      if (n && ins[static_cast<size_t>(j)] != outs[static_cast<size_t>(k)])
        device.transfers()->within(outs[static_cast<size_t>(k)], ins[static_cast<size_t>(j)], n);
    }
    cuda_driver().launch(device.id(), *kernel, kernel_params(*kernel, ins, outs));
    g_launches.fetch_add(1, std::memory_order_relaxed);
  };
}

// Runs `inner` (the interpreter's kernel when empty) on host copies of the
// call's device buffers, and copies its results back.
void run_on_host(const KernelCall& call, const NodeKernel& inner) {
  runtime::Device& device = cuda_device_here("a host-run node");
  runtime::DeviceTransfers& copies = *device.transfers();
  g_host_runs.fetch_add(1, std::memory_order_relaxed);
  runtime::DeviceScope on_host(runtime::host_device());
  KernelCall host{call.op, call.attrs, {}, {}};
  std::vector<runtime::BufferPtr> held;
  held.reserve(call.inputs.size() + call.outputs.size());
  for (const interpreter::KernelIn& in : call.inputs) {
    const size_t n = in.type->num_bytes();
    held.push_back(runtime::make_buffer(n));
    if (n) copies.to_host(held.back()->data(), in.data, n);
    host.inputs.push_back({in.type, held.back()->data()});
  }
  for (const interpreter::KernelOut& out : call.outputs) {
    held.push_back(runtime::make_buffer(out.type->num_bytes()));
    host.outputs.push_back({out.type, held.back()->data()});
  }
  if (inner)
    inner(host);
  else
    interpreter::run_kernel(host);
  for (size_t k = 0; k < call.outputs.size(); ++k)
    if (const size_t n = call.outputs[k].type->num_bytes()) copies.to_device(call.outputs[k].data, host.outputs[k].data, n);
}

// A dot_general as one cuBLAS GEMM (dot_general.h) on the current CUDA device.
NodeKernel gemm_runner(GemmCall plan) {
  return [plan](const KernelCall& call) {
    runtime::Device& device = cuda_device_here("a GEMM");
    GemmCall g = plan;
    g.a = call.inputs[1].data;  // cuBLAS's A is the rhs (dot_general.h)
    g.b = call.inputs[0].data;
    g.c = call.outputs[0].data;
    cuda_driver().gemm(device.id(), g);
    g_launches.fetch_add(1, std::memory_order_relaxed);
  };
}

// A data movement op (movement.h) as its strided copies on the current CUDA device.
// Each copy's kernel is found once, here, not per call.
NodeKernel movement_runner(std::vector<StridedCopy> copies, DType dtype) {
  std::vector<const CudaKernel*> kernels;
  for (const StridedCopy& c : copies) kernels.push_back(&movement_kernel(ir::dtype_size(dtype), c.count));
  return [copies = std::move(copies), kernels = std::move(kernels)](const KernelCall& call) {
    runtime::Device& device = cuda_device_here("a data movement");
    for (size_t k = 0; k < copies.size(); ++k) {
      const StridedCopy& c = copies[k];
      const void* pad = c.padded ? call.inputs[1].data : nullptr;
      cuda_driver().launch(device.id(), *kernels[k],
                           movement_params(c, call.inputs[static_cast<size_t>(c.operand)].data, call.outputs[0].data, pad));
      g_launches.fetch_add(1, std::memory_order_relaxed);
    }
  };
}

// A constant node: its literal's bytes copied to the device.
NodeKernel constant_runner(const ir::Attrs& attrs) {
  ir::LiteralPtr lit = ir::attr<ir::LiteralPtr>(attrs, "value", ir::Op::constant);
  return [lit](const KernelCall& call) {
    runtime::Device& device = cuda_device_here("a constant");
    const size_t n = call.outputs[0].type->num_bytes();
    if (lit->bytes.size() != n)
      throw Error("cuda: a constant of " + std::to_string(lit->bytes.size()) + " bytes for a " + std::to_string(n) +
                  "-byte result");
    if (n) device.transfers()->to_device(call.outputs[0].data, lit->bytes.data(), n);
  };
}

NodeKernel host_runner(NodeKernel inner) {
  return [inner = std::move(inner)](const KernelCall& call) { run_on_host(call, inner); };
}

// Whether the emitter may take `op` alone, as a one-node body.
bool emittable_alone(ir::Op op) { return ir::codegen_kind(op) == ir::CodegenKind::emitted && op != ir::Op::fusion; }

// A body computing one node: its operands as inputs, its results as outputs.
ir::GraphPtr one_node_body(ir::Op op, const std::vector<const ir::ValueType*>& types, const ir::Attrs& attrs,
                           const ir::SourceLoc& loc = {}, const std::string& scope = {}) {
  ir::GraphBuilder b;
  ir::IdList ins;
  for (const ir::ValueType* t : types) ins.push_back(b.input(*t));
  ir::IdList outs = b.add(op, std::move(ins), attrs, loc, scope);
  return b.finish(std::vector<ir::ValueId>(outs.begin(), outs.end()));
}

}  // namespace

CudaRunCounts run_counts() { return {g_launches.load(), g_host_runs.load()}; }

std::string host_reason(ir::Op op) { return std::string(ir::op_info(op).codegen.host_reason); }

namespace {

// Adds a kernel's module source to `out` once (equal sources share one module in the driver).
void add_source(const std::string& source, int64_t kernels, std::unordered_set<std::string>& sources,
                CudaGraphKernels* out) {
  if (!sources.insert(source).second) return;
  out->source += source;
  out->distinct += kernels;
}

// The kernels of a subgraph of node `i`, its source and host-run nodes
// added to `out`'s (named as inside that node).
DeviceBody compile_body(ir::GraphPtr graph, std::string_view what, size_t i, const std::string& why,
                        std::unordered_set<std::string>& sources, CudaGraphKernels* out, Sizes sizes) {
  auto kernels = std::make_shared<const CudaGraphKernels>(cuda_graph_kernels(*graph, nullptr, sizes));
  add_source(kernels->source, kernels->distinct, sources, out);
  const std::string where = std::string(what) + " (node " + std::to_string(i) + (why.empty() ? "" : ", " + why) + ")";
  for (const std::string& h : kernels->on_host) out->on_host.push_back(where + ", in its body: " + h);
  return {std::move(graph), std::move(kernels)};
}

}  // namespace

CudaGraphKernels cuda_graph_kernels(const ir::Graph& graph, const std::vector<NodeKernel>* host_kernels, Sizes sizes) {
  CudaGraphKernels out;
  out.node_kernels.resize(graph.nodes().size());
  std::unordered_set<std::string> sources;
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    const ir::Node& n = graph.nodes()[i];
    std::vector<const ir::ValueType*> types;  // the operands'
    for (ir::ValueId v : n.inputs) types.push_back(&graph.type(v));
    std::string why = host_reason(n.op);
    const ir::CodegenKind kind = ir::codegen_kind(n.op);
    if (kind == ir::CodegenKind::cublas) {
      if (auto plan = plan_dot_general(graph.type(n.inputs[0]), graph.type(n.inputs[1]), n.attrs, &why)) {
        out.node_kernels[i] = gemm_runner(*plan);
        ++out.generated;
        continue;
      }
      why = "not one cuBLAS GEMM: " + why;
    } else if (kind == ir::CodegenKind::cusolver || kind == ir::CodegenKind::cufft) {
      OpKernelRequest request{n.op, types, {}, n.attrs};
      for (ir::ValueId v : n.outputs) request.outputs.push_back(&graph.type(v));
      if (std::optional<SolverKernel> k = library_kernel(request, &why)) {
        for (const CudaKernel& kernel : k->kernels) add_source(kernel.source, 1, sources, &out);
        out.node_kernels[i] = std::move(k->run);
        ++out.generated;
        continue;
      }
      why = (kind == ir::CodegenKind::cufft ? "not a cuFFT call: " : "not a cuSOLVER call: ") + why;
    } else if (kind == ir::CodegenKind::upload) {
      out.node_kernels[i] = constant_runner(n.attrs);
      ++out.generated;
      continue;
    } else if (kind == ir::CodegenKind::strided_copy) {
      if (auto copies = plan_movement(n.op, types, graph.type(n.outputs[0]), n.attrs, &why)) {
        const CudaKernel& k = movement_kernel(ir::dtype_size(graph.type(n.outputs[0]).dtype), 1);
        add_source(k.source, 1, sources, &out);
        out.node_kernels[i] = movement_runner(std::move(*copies), graph.type(n.outputs[0]).dtype);
        ++out.generated;
        continue;
      }
      why = "not a strided copy: " + why;
    } else if (kind == ir::CodegenKind::op_kernel) {
      OpKernelRequest request{n.op, types, {}, n.attrs};
      for (ir::ValueId v : n.outputs) request.outputs.push_back(&graph.type(v));
      if (std::optional<CudaKernel> k = op_kernel(request, &why)) {
        add_source(k->source, 1, sources, &out);
        out.node_kernels[i] = launcher(std::make_shared<const CudaKernel>(std::move(*k)));
        ++out.generated;
        continue;
      }
    } else if (kind == ir::CodegenKind::device_bodies) {
      const size_t hosted = out.on_host.size();
      std::vector<DeviceBody> bodies;
      for (ir::GraphPtr g : device_bodies(n))
        bodies.push_back(compile_body(std::move(g), ir::op_name(n.op), i, "", sources, &out, sizes));
      out.node_kernels[i] = control_flow_runner(n, std::move(bodies));
      if (out.on_host.size() == hosted) ++out.generated;  // on the GPU when no node of its bodies is on the host
      continue;
    } else if (kind == ir::CodegenKind::emitted) {
      try {
        ir::GraphPtr alone;
        if (n.op != ir::Op::fusion) {
          alone = one_node_body(n.op, types, n.attrs, n.loc, n.scope);
        }
        CudaKernel k = emit_named(alone ? *alone : *ir::attr<ir::Graphs>(n, "body").at(0), sizes);
        add_source(k.source, 1, sources, &out);
        out.node_kernels[i] = launcher(std::make_shared<const CudaKernel>(std::move(k)));
        ++out.generated;
        continue;
      } catch (const UnsupportedError& e) {
        why = std::string("the CUDA emitter refused it: ") + e.what();
      }
      if (n.op == ir::Op::fusion) {  // its body's nodes one by one, on the device
        const size_t hosted = out.on_host.size();
        DeviceBody body = compile_body(ir::attr<ir::Graphs>(n, "body").at(0), "fusion", i, why, sources, &out, sizes);
        out.node_kernels[i] = graph_call_runner(std::move(body));
        if (out.on_host.size() == hosted) ++out.generated;
        continue;
      }
    }
    NodeKernel inner = host_kernels && i < host_kernels->size() ? (*host_kernels)[i] : NodeKernel{};
    out.node_kernels[i] = host_runner(std::move(inner));
    out.on_host.push_back(std::string(ir::op_name(n.op)) + " (node " + std::to_string(i) + "): " + why);
  }
  return out;
}

void run_eager_op(const KernelCall& call) {
  // One entry per distinct (op, attributes, operand types): its kernel, or
  // none when the op runs on the host.
  static std::mutex mu;
  static std::unordered_map<std::string, std::shared_ptr<const NodeKernel>> cache;
  if (call.op == ir::Op::dot_general) {
    if (auto plan = plan_dot_general(*call.inputs[0].type, *call.inputs[1].type, call.attrs, nullptr))
      return gemm_runner(*plan)(call);
    return run_on_host(call, {});
  }
  std::vector<const ir::ValueType*> types;  // the operands'
  for (const interpreter::KernelIn& in : call.inputs) types.push_back(in.type);
  if (is_movement(call.op)) {
    if (auto copies = plan_movement(call.op, types, *call.outputs[0].type, call.attrs, nullptr))
      return movement_runner(std::move(*copies), call.outputs[0].type->dtype)(call);
    return run_on_host(call, {});
  }
  const bool library = has_library_kernel(call.op);
  if (!emittable_alone(call.op) && !has_op_kernel(call.op) && !runs_bodies_on_device(call.op) && !library)
    return run_on_host(call, {});
  ir::GraphPtr body = one_node_body(call.op, types, call.attrs);
  std::string key = ir::to_text(*body);
  std::shared_ptr<const NodeKernel> kernel;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(key);
    if (it != cache.end()) kernel = it->second;
  }
  if (!kernel) {
    NodeKernel made;
    if (runs_bodies_on_device(call.op)) {
      const ir::Node& node = body->nodes().back();
      std::vector<DeviceBody> bodies;
      for (ir::GraphPtr g : device_bodies(node))
        bodies.push_back({g, std::make_shared<const CudaGraphKernels>(cuda_graph_kernels(*g))});
      made = control_flow_runner(node, std::move(bodies));
    } else if (library) {
      OpKernelRequest request{call.op, types, {}, call.attrs};
      for (const interpreter::KernelOut& out : call.outputs) request.outputs.push_back(out.type);
      std::optional<SolverKernel> k = library_kernel(request, nullptr);
      made = k ? std::move(k->run) : host_runner({});
    } else if (has_op_kernel(call.op)) {
      OpKernelRequest request{call.op, types, {}, call.attrs};
      for (const interpreter::KernelOut& out : call.outputs) request.outputs.push_back(out.type);
      std::optional<CudaKernel> k = op_kernel(request, nullptr);
      made = k ? launcher(std::make_shared<const CudaKernel>(std::move(*k))) : host_runner({});
    } else {
      try {
        made = launcher(std::make_shared<const CudaKernel>(emit_named(*body)));
      } catch (const UnsupportedError&) {
        made = host_runner({});
      }
    }
    kernel = std::make_shared<const NodeKernel>(std::move(made));
    std::lock_guard<std::mutex> lock(mu);
    cache.emplace(std::move(key), kernel);
  }
  (*kernel)(call);
}

}  // namespace graft::codegen::cuda
