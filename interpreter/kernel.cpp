#include "interpreter/kernel.h"

#include "graft/errors.h"

namespace graft::interpreter {

using ir::Op;
namespace {

KernelTable build_table() {
  KernelTable t{};
  // Filled from ops.def: the rule of each op that must have one (see ir/op.h).
#define GRAFT_OP(ident, ...) t[static_cast<size_t>(Op::ident)] = ident##_kernel;
#include "ir/ops.def"
#undef GRAFT_OP
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
