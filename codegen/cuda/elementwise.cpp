// The CUDA C++ emitted for each elementwise op: the CPU emitter's call of the
// op's scalar function gcg_<ident> (codegen/cpu/elementwise.cpp), from
// interpreter/kernels/scalar_ops.h, which the CUDA prelude splices in too.
// There the C library functions it names (sinf, expf, ...) are CUDA's math
// library: correctly rounded or within the ULP bounds of the CUDA
// Programming Guide, so float results of VECTOR_MATH ops may differ from the
// CPU's vectorised table by those bounds (docs/CUDA.md lists them). With the
// emulated driver the same names are the host's libm. Complex values:
// complex_ops.h's gcg_c_<ident> over complex_device.h's std::complex,
// the transcendental functions included (device_complex_fn).
#include "codegen/cuda/elementwise.h"

#include "codegen/cpu/elementwise.h"
#include "graft/errors.h"
#include "interpreter/kernels/complex_math.h"

namespace graft::codegen::cuda {

using ir::Op;

void refuse_as_cuda(const UnsupportedError& from_cpu_emitter) {
  std::string why = from_cpu_emitter.what();
  const std::string prefix = "cpu codegen: ";
  if (why.rfind(prefix, 0) == 0) why = why.substr(prefix.size());
  throw UnsupportedError("cuda codegen: " + why);
}

namespace {

// The complex functions complex_device.h only declares (complex_ops.h names
// them): the inverse circular and hyperbolic ones run on the host.
bool host_complex_fn(Op op) {
  return op == Op::asin || op == Op::acos || op == Op::atan || op == Op::asinh || op == Op::acosh || op == Op::atanh;
}

}  // namespace

std::string op_expr(Op op, DType dt, DType out, const std::vector<std::string>& a) {
  if (ir::is_complex(dt) && host_complex_fn(op))
    throw UnsupportedError("cuda codegen: no CUDA code for " + std::string(ir::op_name(op)) + " of " + dtype_name(dt) +
                           " yet (the host computes it)");
  // The CPU emitter leaves the transcendental functions of complex values to
  // the interpreter (per-element calls of the C library are slower fused
  // there); a GPU thread calls complex_device.h's as cheaply as any function.
  if (ir::is_complex(dt) && interpreter::has_complex_fn(op) && ir::op_info(op).kernel == ir::KernelKind::vector_math) {
    std::string args;
    for (const std::string& x : a) args += (args.empty() ? "" : ", ") + x;
    return "gcg_c_" + std::string(ir::op_info(op).ident) + "(" + args + ")";
  }
  try {
    return cpu::detail::op_expr(op, dt, out, a);
  } catch (const UnsupportedError& e) {
    refuse_as_cuda(e);
  }
}

}  // namespace graft::codegen::cuda
