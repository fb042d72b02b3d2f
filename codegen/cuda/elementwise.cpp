// The CUDA C++ emitted for each elementwise op: the CPU emitter's call of the
// op's scalar function gcg_<ident> (codegen/cpu/elementwise.cpp), from
// interpreter/kernels/scalar_ops.h, which the CUDA prelude splices in too.
// There the C library functions it names (sinf, expf, ...) are CUDA's math
// library: correctly rounded or within the ULP bounds of the CUDA
// Programming Guide, so float results of VECTOR_MATH ops may differ from the
// CPU's vectorised table by those bounds (docs/CUDA.md lists them). With the
// emulated driver the same names are the host's libm.
#include "codegen/cuda/elementwise.h"

#include "codegen/cpu/elementwise.h"
#include "graft/errors.h"

namespace graft::codegen::cuda {

using ir::Op;

void refuse_as_cuda(const UnsupportedError& from_cpu_emitter) {
  std::string why = from_cpu_emitter.what();
  const std::string prefix = "cpu codegen: ";
  if (why.rfind(prefix, 0) == 0) why = why.substr(prefix.size());
  throw UnsupportedError("cuda codegen: " + why);
}

std::string op_expr(Op op, DType dt, DType out, const std::vector<std::string>& a) {
  try {
    return cpu::detail::op_expr(op, dt, out, a);
  } catch (const UnsupportedError& e) {
    refuse_as_cuda(e);
  }
}

}  // namespace graft::codegen::cuda
