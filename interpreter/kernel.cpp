#include "interpreter/kernel.h"

#include "graft/errors.h"

namespace graft::interpreter {
namespace {

KernelTable build_table() {
  KernelTable t{};
  register_elementwise_kernels(t);
  register_reduce_kernels(t);
  register_shape_kernels(t);
  register_creation_kernels(t);
  register_linalg_kernels(t);
  register_indexing_kernels(t);
  register_sort_kernels(t);
  register_random_kernels(t);
  register_custom_kernels(t);
  register_control_flow_kernels(t);
  register_fusion_kernels(t);
  register_collective_kernels(t);
  return t;
}

}  // namespace

Kernel kernel_for(ir::Op op) {
  static const KernelTable table = build_table();
  return table[static_cast<size_t>(op)];
}

void run_kernel(const KernelCall& call) {
  Kernel k = kernel_for(call.op);
  if (!k) throw UnsupportedError(std::string(ir::op_name(call.op)) + ": the interpreter has no kernel for this op yet");
  k(call);
}

}  // namespace graft::interpreter
