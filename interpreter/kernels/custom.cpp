// CPU kernels of calls that carry user rules or a recompute marker: running
// them means running the wrapped function's graph ("call" for custom_jvp_call
// and custom_vjp_call, "body" for remat, "fun" for linear_call).
#include "interpreter/evaluate.h"
#include "ir/attr_access.h"
#include "interpreter/kernels/loops.h"

namespace graft::interpreter {
namespace {

void call_kernel(const KernelCall& call) {
  const char* name = call.op == ir::Op::remat ? "body" : call.op == ir::Op::linear_call ? "fun" : "call";
  const ir::Graph& body = *ir::attr<ir::Graphs>(call.attrs, name, call.op).at(0);
  evaluate_call(body, call);
}

}  // namespace

void custom_jvp_call_kernel(const KernelCall& call) { call_kernel(call); }
void custom_vjp_call_kernel(const KernelCall& call) { call_kernel(call); }
void remat_kernel(const KernelCall& call) { call_kernel(call); }
void linear_call_kernel(const KernelCall& call) { call_kernel(call); }

// custom_lin stands for the unknown forward derivative of a custom_vjp
// function; reverse mode transposes it away, so reaching it here means jvp.
void custom_lin_kernel(const KernelCall&) {
  throw UnsupportedError(
      "custom_lin: a custom_vjp function has no forward-mode derivative (jvp, jacfwd); use grad, vjp or jacrev, or "
      "give it a custom_jvp rule");
}

}  // namespace graft::interpreter
