// CUDA kernel of conv_general_dilated (op_kernels.h): a direct convolution,
// one thread per output element, in any layout, with strides, padding, lhs
// and rhs dilation and feature or batch groups (sizes and strides are
// constants in the source). Each thread sums its group's input features,
// then the window row-major, skipping positions that fall on padding or on
// the lhs dilation's holes. Its sums are in another order than the CPU
// kernel's GEMMs, so results agree within rounding, not bit for bit. A
// straightforward kernel: correct everywhere, not cuDNN's speed.
#include "codegen/cpu/cpp_text.h"
#include "codegen/cuda/op_kernels.h"
#include "interpreter/kernels/layout.h"
#include "ir/attr_access.h"

namespace graft::codegen::cuda::detail {

using cpu::detail::cat;
using cpu::detail::ctype;
using cpu::detail::num;

std::optional<CudaKernel> conv_kernel(const OpKernelRequest& r, std::string* why) {
  const ir::ValueType &lhs = *r.inputs.at(0), &rhs = *r.inputs.at(1), &out = *r.outputs.at(0);
  if (r.op != ir::Op::conv_general_dilated) {
    *why = cat(ir::op_name(r.op), " is not a convolution");
    return std::nullopt;
  }
  auto ints = [&](const char* name) { return ir::attr<ir::Ints>(r.attrs, name, r.op); };
  const ir::Ints ls = ints("lhs_spec"), rs = ints("rhs_spec"), os = ints("out_spec"), stride = ints("window_strides"),
                 lo = ints("padding_low"), ld = ints("lhs_dilation"), rd = ints("rhs_dilation");
  const int64_t groups = ir::attr<int64_t>(r.attrs, "feature_group_count", r.op);
  const int64_t batch_groups = ir::attr<int64_t>(r.attrs, "batch_group_count", r.op);
  const std::vector<int64_t> lst = interpreter::row_major_strides(lhs.shape),
                             rst = interpreter::row_major_strides(rhs.shape);
  const size_t n = lhs.shape.size() - 2;
  const int64_t batch = out.shape[os[0]], features = out.shape[os[1]], in_per_group = rhs.shape[rs[1]];
  const std::string t = ctype(out.dtype);
  // Output element o: its batch b, feature f and position q0.. from out's layout.
  std::string head = "    int64_t rem = o;\n";
  for (int d = static_cast<int>(out.shape.size()) - 1; d >= 0; --d) {
    const int64_t size = std::max<int64_t>(out.shape[d], 1);
    head += cat("    const int64_t i", std::to_string(d), " = rem % ", num(size), "; rem /= ", num(size), ";\n");
  }
  head += cat("    const int64_t b = i", std::to_string(os[0]), ", f = i", std::to_string(os[1]), ";\n");
  for (size_t d = 0; d < n; ++d)
    head += cat("    const int64_t q", std::to_string(d), " = i", std::to_string(os[2 + d]), ";\n");
  // The lhs batch element and first feature this output reads.
  const std::string lb =
      batch_groups > 1 ? cat("(f / ", num(features / batch_groups), ") * ", num(batch), " + b") : "b";
  const std::string lf = groups > 1 ? cat("(f / ", num(features / groups), ") * ", num(in_per_group)) : "0";
  head += cat("    const int64_t lbase = (", lb, ") * ", num(lst[ls[0]]), " + (", lf, ") * ", num(lst[ls[1]]), ";\n",
              "    const int64_t rbase = f * ", num(rst[rs[0]]), ";\n");
  std::string open, close, l_at = "lbase + i * " + num(lst[ls[1]]), r_at = "rbase + i * " + num(rst[rs[1]]);
  for (size_t d = 0; d < n; ++d) {
    const std::string w = std::string("w") + std::to_string(d), a = std::string("a") + std::to_string(d);
    open += cat("      for (int64_t ", w, " = 0; ", w, " < ", num(rhs.shape[rs[2 + d]]), "; ++", w, ") {\n",
                "        const int64_t ", a, " = q", std::to_string(d), " * ", num(stride[d]), " + ", w, " * ",
                num(rd[d]), " - (", num(lo[d]), ");\n", "        if (", a, " < 0 || ", a, " % ", num(ld[d]),
                " != 0 || ", a, " / ", num(ld[d]), " >= ", num(lhs.shape[ls[2 + d]]), ") continue;\n");
    close += "      }\n";
    l_at = cat(l_at, " + (", a, " / ", num(ld[d]), ") * ", num(lst[ls[2 + d]]));
    r_at = cat(r_at, " + ", w, " * ", num(rst[rs[2 + d]]));
  }
  const int64_t outputs = out.num_elements();
  std::string body;
  if (outputs > 0)
    body = cat("  for (int64_t o = gcg_tid; o < p.n; o += gcg_stride) {\n", head, "    ", t, " acc = (", t, ")0;\n",
               "    for (int64_t i = 0; i < ", num(in_per_group), "; ++i) {\n", open, "        acc += p.in0[", l_at,
               "] * p.in1[", r_at, "];\n", close, "    }\n", "    p.out0[o] = acc;\n  }\n");
  return frame_kernel(cat("conv_general_dilated of ", ir::type_str(lhs), " and ", ir::type_str(rhs)), r, outputs, body);
}

}  // namespace graft::codegen::cuda::detail
