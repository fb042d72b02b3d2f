#include "interpreter/kernel.h"

#include <algorithm>

#include "graft/errors.h"

namespace graft::interpreter {

using ir::Op;
namespace {

KernelTable build_table() {
  KernelTable t{};
  // Filled from ops.def's `kernel` column: the op's own kernel or the elementwise loop.
#define GRAFT_KERNEL_OWN(ident) ident##_kernel
#define GRAFT_KERNEL_SCALAR(ident) elementwise_kernel(Op::ident)
#define GRAFT_KERNEL_VECTOR_MATH(ident) elementwise_kernel(Op::ident)
#define GRAFT_OP(ident, name, arity, family, dtypes, shape, jvp, linear, batch, kernel, ...) \
  t[static_cast<size_t>(Op::ident)] = GRAFT_KERNEL_##kernel(ident);
#include "ir/ops.def"
#undef GRAFT_OP
#undef GRAFT_KERNEL_OWN
#undef GRAFT_KERNEL_SCALAR
#undef GRAFT_KERNEL_VECTOR_MATH
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
  // Outputs with no elements need no work, and a kernel's index arithmetic
  // over the other axes of an empty shape (f32[0, 2^62, 4]) could overflow.
  // (A zero axis is looked for directly: this runs on every eager op, and
  // counting elements divides per axis to check for overflow.)
  bool all_empty = !call.outputs.empty();
  for (const KernelOut& out : call.outputs) {
    const Shape& s = out.type->shape;
    all_empty = all_empty && std::find(s.begin(), s.end(), int64_t{0}) != s.end();
  }
  if (all_empty) return;
  k(call);
}

}  // namespace graft::interpreter
