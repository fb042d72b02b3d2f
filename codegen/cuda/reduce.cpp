// CUDA kernels of the reductions outside fused bodies (op_kernels.h):
// reduce_prod, reduce_and and reduce_or (one thread per output element,
// folding its elements row-major from the identity, as the interpreter's
// reduce kernel), argmax and argmin (the first extreme index; a NaN is the
// extreme), and cumsum, cumprod, cummax and cummin (one thread per line,
// in the interpreter's order). Same order, same steps: the interpreter's
// bits. (reduce_sum, reduce_max and reduce_min are emitted bodies: emit.h.)
#include "codegen/cpu/cpp_text.h"
#include "codegen/cuda/op_kernels.h"
#include "interpreter/kernels/layout.h"
#include "ir/attr_access.h"

namespace graft::codegen::cuda::detail {

using cpu::detail::cat;
using cpu::detail::ctype;
using cpu::detail::num;
using ir::Op;

namespace {

bool is_float(DType d) { return d == DType::f32 || d == DType::f64; }

// The input's axes split into kept and reduced ones, with their strides.
struct Split {
  std::vector<int64_t> kept, kept_strides, reduced, reduced_strides;
  int64_t kept_count = 1, reduced_count = 1;
};

Split split(const Shape& shape, const std::vector<bool>& reduced) {
  Split s;
  const std::vector<int64_t> st = interpreter::row_major_strides(shape);
  for (size_t d = 0; d < shape.size(); ++d) {
    (reduced[d] ? s.reduced : s.kept).push_back(shape[d]);
    (reduced[d] ? s.reduced_strides : s.kept_strides).push_back(st[d]);
    (reduced[d] ? s.reduced_count : s.kept_count) *= shape[d];
  }
  return s;
}

std::optional<CudaKernel> fold_kernel(const OpKernelRequest& r, std::string* why) {
  const ir::ValueType& in = *r.inputs.at(0);
  const DType d = in.dtype;
  const std::string t = ctype(d);
  std::string identity, step;
  if (r.op == Op::reduce_prod) {
    identity = cat("(", t, ")1");
    step = wrapping_mul_expr(d, "acc", "v");
  } else if (is_float(d)) {
    *why = cat(ir::op_name(r.op), " of ", ir::type_str(in), ": a bitwise reduction of floats");
    return std::nullopt;
  } else if (r.op == Op::reduce_and) {
    identity = d == DType::bool_ ? "true" : cat("(", t, ")~(", t, ")0");
    step = cat("(", t, ")(acc & v)");
  } else {
    identity = d == DType::bool_ ? "false" : cat("(", t, ")0");
    step = cat("(", t, ")(acc | v)");
  }
  std::vector<bool> reduced(in.shape.size(), false);
  for (int64_t a : ir::attr<ir::Ints>(r.attrs, "axes", r.op)) reduced[static_cast<size_t>(a)] = true;
  const Split s = split(in.shape, reduced);
  const int64_t outs = r.outputs.at(0)->num_elements();
  std::string body;
  if (outs > 0) {
    body = cat("  for (int64_t o = gcg_tid; o < p.n; o += gcg_stride) {\n",
               "    const int64_t base = ", offset_expr(s.kept, s.kept_strides, "o"), ";\n",
               "    ", t, " acc = ", identity, ";\n");
    if (s.reduced_count > 0)
      body += cat("    for (int64_t r = 0; r < ", num(s.reduced_count), "; ++r) {\n",
                  "      const ", t, " v = p.in0[base + ", offset_expr(s.reduced, s.reduced_strides, "r"), "];\n",
                  "      acc = ", step, ";\n",
                  "    }\n");
    body += "    p.out0[o] = acc;\n  }\n";
  }
  return frame_kernel(cat(ir::op_name(r.op), " of ", ir::type_str(in)), r, outs, body);
}

std::optional<CudaKernel> arg_kernel(const OpKernelRequest& r, std::string* why) {
  const ir::ValueType& in = *r.inputs.at(0);
  const size_t axis = static_cast<size_t>(ir::attr<int64_t>(r.attrs, "axis", r.op));
  std::vector<bool> reduced(in.shape.size(), false);
  reduced[axis] = true;
  const Split s = split(in.shape, reduced);
  const int64_t outs = r.outputs.at(0)->num_elements();
  if (outs > 0 && s.reduced_count == 0) {
    *why = cat(ir::op_name(r.op), " along an empty axis of ", ir::type_str(in));
    return std::nullopt;
  }
  const std::string t = ctype(in.dtype);
  std::string better = r.op == Op::argmax ? "v > best" : "v < best";
  if (is_float(in.dtype)) better = cat("best != best ? false : v != v ? true : ", better);
  std::string body;
  if (outs > 0)
    body = cat("  for (int64_t o = gcg_tid; o < p.n; o += gcg_stride) {\n",
               "    const int64_t base = ", offset_expr(s.kept, s.kept_strides, "o"), ";\n",
               "    ", t, " best = p.in0[base];\n",
               "    int64_t at = 0;\n",
               "    for (int64_t i = 1; i < ", num(s.reduced_count), "; ++i) {\n",
               "      const ", t, " v = p.in0[base + i * ", num(s.reduced_strides[0]), "];\n",
               "      if (", better, ") {\n        best = v;\n        at = i;\n      }\n",
               "    }\n",
               "    p.out0[o] = (", ctype(r.outputs[0]->dtype), ")at;\n",
               "  }\n");
  return frame_kernel(cat(ir::op_name(r.op), " of ", ir::type_str(in)), r, outs, body);
}

std::optional<CudaKernel> cumulative_kernel(const OpKernelRequest& r, std::string*) {
  const ir::ValueType& in = *r.inputs.at(0);
  const size_t axis = static_cast<size_t>(ir::attr<int64_t>(r.attrs, "axis", r.op));
  const bool reverse = ir::attr<int64_t>(r.attrs, "reverse", r.op) != 0;
  const DType d = in.dtype;
  std::string step;
  switch (r.op) {
    case Op::cumsum: step = wrapping_add_expr(d, "acc", "v"); break;
    case Op::cumprod: step = wrapping_mul_expr(d, "acc", "v"); break;
    case Op::cummax: step = cat("gcg_rmax<", ctype(d), ">(acc, v)"); break;
    default: step = cat("gcg_rmin<", ctype(d), ">(acc, v)"); break;
  }
  int64_t inner = 1;
  for (size_t a = axis + 1; a < in.shape.size(); ++a) inner *= in.shape[a];
  const int64_t n = in.shape[axis];
  const int64_t lines = n == 0 ? 0 : in.num_elements() / n;
  const std::string t = ctype(d);
  std::string body;
  if (lines > 0)
    body = cat("  for (int64_t l = gcg_tid; l < p.n; l += gcg_stride) {\n",
               "    const int64_t base = (l / ", num(inner), ") * ", num(n * inner), " + l % ", num(inner), ";\n",
               "    ", t, " acc = p.in0[base + ", reverse ? num((n - 1) * inner) : std::string("0"), "];\n",
               "    for (int64_t k = 0; k < ", num(n), "; ++k) {\n",
               "      const int64_t i = base + ", reverse ? cat("(", num(n - 1), " - k)") : std::string("k"), " * ",
               num(inner), ";\n",
               "      const ", t, " v = p.in0[i];\n",
               "      if (k > 0) acc = ", step, ";\n",
               "      p.out0[i] = acc;\n",
               "    }\n",
               "  }\n");
  return frame_kernel(cat(ir::op_name(r.op), " of ", ir::type_str(in), reverse ? " (reverse)" : ""), r, lines, body);
}

}  // namespace

std::optional<CudaKernel> reduce_kernel(const OpKernelRequest& r, std::string* why) {
  switch (r.op) {
    case Op::reduce_prod: case Op::reduce_and: case Op::reduce_or: return fold_kernel(r, why);
    case Op::argmax: case Op::argmin: return arg_kernel(r, why);
    case Op::cumsum: case Op::cumprod: case Op::cummax: case Op::cummin: return cumulative_kernel(r, why);
    default: *why = cat(ir::op_name(r.op), " has no CUDA op kernel"); return std::nullopt;
  }
}

}  // namespace graft::codegen::cuda::detail
