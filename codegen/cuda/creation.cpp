// The CUDA kernel of iota (op_kernels.h): element i is its index along
// `dimension`, converted as the interpreter's static_cast does.
#include "codegen/cpu/cpp_text.h"
#include "codegen/cuda/op_kernels.h"
#include "interpreter/kernels/layout.h"
#include "ir/attr_access.h"

namespace graft::codegen::cuda::detail {

using cpu::detail::cat;
using cpu::detail::ctype;
using cpu::detail::num;

std::optional<CudaKernel> creation_kernel(const OpKernelRequest& r, std::string* why) {
  if (r.op != ir::Op::iota) {
    *why = std::string(ir::op_name(r.op)) + " has no CUDA kernel";
    return std::nullopt;
  }
  const ir::ValueType& out = *r.outputs.at(0);
  const int64_t n = out.num_elements();
  std::string body;
  if (n > 0) {
    const size_t dim = static_cast<size_t>(ir::attr<int64_t>(r.attrs, "dimension", r.op));
    const int64_t stride = interpreter::row_major_strides(out.shape)[dim], size = out.shape[dim];
    body = cat("  for (int64_t i = gcg_tid; i < p.n; i += gcg_stride) p.out0[i] = (", ctype(out.dtype), ")((i / ",
               num(stride), ") % ", num(size), ");\n");
  }
  return frame_kernel(cat("iota of ", ir::type_str(out)), r, n, body);
}

}  // namespace graft::codegen::cuda::detail
