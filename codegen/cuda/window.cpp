// CUDA kernels of the windowed reductions (op_kernels.h): one thread per
// output element walks its window row-major, skipping padding and base
// dilation's holes, as the interpreter's kernel visits it: reduce_window_*
// fold from the identity with the interpreter's steps, select_and_gather_add
// keeps the first element the select prefers. select_and_scatter_add runs
// one thread per operand element, which sums, in the windows' order, the
// source of each window whose selection it is (the window's selection
// recomputed): no atomics, and the interpreter's order of additions. Same
// order, same steps: the interpreter's bits.
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

struct WindowAttrs {
  ir::Ints window, strides, lo, base, dilation;
  explicit WindowAttrs(const OpKernelRequest& r)
      : window(ir::attr<ir::Ints>(r.attrs, "window_dimensions", r.op)),
        strides(ir::attr<ir::Ints>(r.attrs, "window_strides", r.op)),
        lo(ir::attr<ir::Ints>(r.attrs, "padding_low", r.op)),
        base(ir::attr<ir::Ints>(r.attrs, "base_dilation", r.op)),
        dilation(ir::attr<ir::Ints>(r.attrs, "window_dilation", r.op)) {}
};

// Declares p0.. (the multi-index of flat index `var` in `shape`).
std::string unravel(const Shape& shape, const std::string& var, const std::string& prefix) {
  std::string s = cat("    int64_t rem_", prefix, " = ", var, ";\n");
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d)
    s += cat("    const int64_t ", prefix, std::to_string(d), " = rem_", prefix, " % ",
             num(std::max<int64_t>(shape[d], 1)), "; rem_", prefix, " /= ", num(std::max<int64_t>(shape[d], 1)), ";\n");
  return s;
}

// Loops over window offsets w0.. of output position p0.. (row-major),
// `body` seeing `at`, the operand offset of each real element.
std::string window_loops(const WindowAttrs& a, const Shape& operand, const std::string& body) {
  const std::vector<int64_t> steps = interpreter::row_major_strides(operand);
  std::string open, close, at = "0";
  for (size_t d = 0; d < operand.size(); ++d) {
    const std::string w = std::string("w") + std::to_string(d), x = std::string("a") + std::to_string(d);
    open += cat("    for (int64_t ", w, " = 0; ", w, " < ", num(a.window[d]), "; ++", w, ") {\n",
                "      const int64_t ", x, " = p", std::to_string(d), " * ", num(a.strides[d]), " + ", w, " * ",
                num(a.dilation[d]), " - (", num(a.lo[d]), ");\n", "      if (", x, " < 0 || ", x, " % ", num(a.base[d]),
                " != 0 || ", x, " / ", num(a.base[d]), " >= ", num(operand[d]), ") continue;\n");
    close += "    }\n";
    at = cat(at, " + (", x, " / ", num(a.base[d]), ") * ", num(steps[d]));
  }
  return cat(open, "      const int64_t at = ", at, ";\n", body, close);
}

std::string identity(Op op, DType d) {
  const std::string t = ctype(d);
  if (op == Op::reduce_window_sum) return d == DType::bool_ ? "false" : cat("(", t, ")0");
  const bool max = op == Op::reduce_window_max;
  if (d == DType::bool_) return max ? "false" : "true";
  if (d == DType::f32) return max ? "-gcg_inf_f32()" : "gcg_inf_f32()";
  if (d == DType::f64) return max ? "-gcg_inf_f64()" : "gcg_inf_f64()";
  return cat("gcg_t<", t, ">::", max ? "lo" : "hi");
}

std::optional<CudaKernel> reduce_window(const OpKernelRequest& r) {
  const ir::ValueType& in = *r.inputs.at(0);
  const Shape& out = r.outputs.at(0)->shape;
  const std::string t = ctype(in.dtype);
  const char* step = r.op == Op::reduce_window_sum   ? "gcg_sum"
                     : r.op == Op::reduce_window_max ? "gcg_rmax"
                                                     : "gcg_rmin";
  const int64_t n = r.outputs[0]->num_elements();
  std::string body;
  if (n > 0)
    body = cat("  for (int64_t o = gcg_tid; o < p.n; o += gcg_stride) {\n", unravel(out, "o", "p"), "    ", t,
               " acc = ", identity(r.op, in.dtype), ";\n",
               window_loops(WindowAttrs(r), in.shape, cat("      acc = ", step, "<", t, ">(acc, p.in0[at]);\n")),
               "    p.out0[o] = acc;\n  }\n");
  return frame_kernel(cat(ir::op_name(r.op), " of ", ir::type_str(in)), r, n, body);
}

// `sel` = the operand offset window p0.. selects (-1: none), `x` the operand.
std::string selection(const WindowAttrs& a, const Shape& operand, const std::string& t, bool ge, const char* x) {
  return cat("    int64_t sel = -1;\n    ", t, " best = (", t, ")0;\n",
             window_loops(a, operand,
                          cat("      const ", t, " v = p.", x, "[at];\n", "      if (sel < 0 || !(best ",
                              ge ? ">=" : "<=", " v)) {\n        sel = at;\n        best = v;\n      }\n")));
}

std::optional<CudaKernel> gather(const OpKernelRequest& r) {
  const ir::ValueType& x = *r.inputs.at(1);
  const std::string t = ctype(x.dtype);
  const bool ge = ir::attr<std::string>(r.attrs, "select", r.op) == "ge";
  const int64_t n = r.outputs.at(0)->num_elements();
  std::string body;
  if (n > 0)
    body = cat("  for (int64_t o = gcg_tid; o < p.n; o += gcg_stride) {\n", unravel(r.outputs[0]->shape, "o", "p"),
               selection(WindowAttrs(r), x.shape, t, ge, "in1"), "    p.out0[o] = sel < 0 ? (", t,
               ")0 : p.in0[sel];\n  }\n");
  return frame_kernel(cat("select_and_gather_add of ", ir::type_str(x)), r, n, body);
}

std::optional<CudaKernel> scatter(const OpKernelRequest& r) {
  const ir::ValueType &source = *r.inputs.at(0), &x = *r.inputs.at(1);
  const std::string t = ctype(x.dtype);
  const bool ge = ir::attr<std::string>(r.attrs, "select", r.op) == "ge";
  const WindowAttrs a(r);
  const int64_t n = x.num_elements();
  const std::vector<int64_t> src_steps = interpreter::row_major_strides(source.shape);
  // Windows p holding element e: for window offsets w in reverse (so p ascends), p = (e * base + lo - w * dilation) /
  // stride.
  std::string open, close, src = "0";
  for (size_t d = 0; d < x.shape.size(); ++d) {
    const std::string w = std::string("v") + std::to_string(d), q = std::string("p") + std::to_string(d),
                      num_d = std::string("num") + std::to_string(d);
    open += cat("    for (int64_t ", w, " = ", num(a.window[d] - 1), "; ", w, " >= 0; --", w, ") {\n",
                "      const int64_t ", num_d, " = e", std::to_string(d), " * ", num(a.base[d]), " + (", num(a.lo[d]),
                ") - ", w, " * ", num(a.dilation[d]), ";\n", "      if (", num_d, " < 0 || ", num_d, " % ",
                num(a.strides[d]), " != 0 || ", num_d, " / ", num(a.strides[d]), " >= ", num(source.shape[d]),
                ") continue;\n", "      const int64_t ", q, " = ", num_d, " / ", num(a.strides[d]), ";\n");
    close += "    }\n";
    src = cat(src, " + ", q, " * ", num(src_steps[d]));
  }
  std::string body;
  if (n > 0 && source.num_elements() > 0)
    body = cat("  for (int64_t o = gcg_tid; o < p.n; o += gcg_stride) {\n", unravel(x.shape, "o", "e"), "    ", t,
               " acc = (", t, ")0;\n", open, "    {\n", selection(a, x.shape, t, ge, "in1"),
               "    if (sel == o) acc = gcg_sum<", t, ">(acc, p.in0[", src, "]);\n    }\n", close,
               "    p.out0[o] = acc;\n  }\n");
  else if (n > 0)
    body = cat("  for (int64_t o = gcg_tid; o < p.n; o += gcg_stride) p.out0[o] = (", t, ")0;\n");
  return frame_kernel(cat("select_and_scatter_add of ", ir::type_str(x)), r, n, body);
}

}  // namespace

std::optional<CudaKernel> window_kernel(const OpKernelRequest& r, std::string* why) {
  switch (r.op) {
    case Op::reduce_window_sum:
    case Op::reduce_window_max:
    case Op::reduce_window_min: return reduce_window(r);
    case Op::select_and_gather_add: return gather(r);
    case Op::select_and_scatter_add: return scatter(r);
    default: *why = cat(ir::op_name(r.op), " is not a windowed reduction"); return std::nullopt;
  }
}

}  // namespace graft::codegen::cuda::detail
