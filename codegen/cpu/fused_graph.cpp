#include "codegen/cpu/fused_graph.h"
#include "ir/attr_access.h"

#include <optional>

#include "codegen/cpu/compiler.h"
#include "codegen/cpu/emit.h"

namespace graft::codegen::cpu {

FusedGraphKernels compile_fused_graph(const ir::Graph& graph) {
  FusedGraphKernels out;
  out.node_kernels.resize(graph.nodes().size());
  struct Pending {
    size_t node;
    std::vector<int64_t> scalars;
    int64_t n;
  };
  std::vector<Pending> pending;
  std::vector<std::string> symbols;
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    const ir::Node& node = graph.nodes()[i];
    if (node.op != ir::Op::fusion) continue;
    const ir::Graph& body = *ir::attr<ir::Graphs>(node, "body").at(0);
    if (std::optional<std::string> why = unsupported_reason(body)) {
      out.refused.push_back("node " + std::to_string(i) + ": " + *why);
      continue;
    }
    // Symbols are numbered by position, so equal graphs give equal sources.
    std::string symbol = "graft_kernel_" + std::to_string(pending.size());
    out.source += emit_kernel(body, symbol);
    symbols.push_back(symbol);
    pending.push_back({i, kernel_scalars(body), kernel_elements(body)});
  }
  if (pending.empty()) return out;
  std::vector<KernelFn> fns = compile_kernels(out.source, symbols);
  for (size_t k = 0; k < pending.size(); ++k) {
    KernelFn fn = fns[k];
    out.node_kernels[pending[k].node] = [fn, scalars = pending[k].scalars, n = pending[k].n](
                                            const interpreter::KernelCall& call) {
      // Few operands: pointers on the stack for the common case.
      constexpr size_t kSmall = 16;
      const void* ins_small[kSmall];
      void* outs_small[kSmall];
      std::vector<const void*> ins_big;
      std::vector<void*> outs_big;
      const void** ins = ins_small;
      void** outs = outs_small;
      if (call.inputs.size() > kSmall) {
        ins_big.resize(call.inputs.size());
        ins = ins_big.data();
      }
      if (call.outputs.size() > kSmall) {
        outs_big.resize(call.outputs.size());
        outs = outs_big.data();
      }
      for (size_t j = 0; j < call.inputs.size(); ++j) ins[j] = call.inputs[j].data;
      for (size_t j = 0; j < call.outputs.size(); ++j) outs[j] = call.outputs[j].data;
      fn(ins, outs, scalars.data(), n);
    };
  }
  out.compiled = static_cast<int64_t>(pending.size());
  return out;
}

}  // namespace graft::codegen::cpu
