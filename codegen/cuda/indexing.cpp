// CUDA kernels of indexing with run-time indices (op_kernels.h), with the
// interpreter's rules (interpreter/kernels/indexing.cpp): slice starts are
// clamped so the window stays inside, gather clamps its indices,
// scatter_add drops out-of-range ones. No index reads or writes out of
// bounds.
//   gather                one thread per output element;
//   scatter_add           the operand copied into the output first (a
//                         device copy, unless in place), then one thread
//                         per (outer, inner) column adding the updates in
//                         index order (the interpreter's order, so the same
//                         bits, and no atomics);
//   dynamic_slice         one thread per output element;
//   dynamic_update_slice  one thread per output element (the window's from
//                         the update, the rest from the operand), or, in
//                         place, per element of the window only.
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

// The gather/scatter_add index space, as the interpreter's TakeGeometry:
// [outer, middle, inner] with outer over x[:axis], middle over
// indices[batch_dims:], inner over x[axis+1:].
struct Take {
  int64_t outer = 1, middle = 1, inner = 1, axis_size = 0, per_batch = 1;
};

Take take_geometry(const OpKernelRequest& r) {
  const Shape& x = r.inputs.at(0)->shape;
  const Shape& idx = r.inputs.at(1)->shape;
  const int64_t axis = ir::attr<int64_t>(r.attrs, "axis", r.op);
  const int64_t b = ir::attr<int64_t>(r.attrs, "batch_dims", r.op);
  Take g;
  for (int64_t d = 0; d < axis; ++d) g.outer *= x[static_cast<size_t>(d)];
  for (int64_t d = b; d < axis; ++d) g.per_batch *= x[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(b); d < idx.size(); ++d) g.middle *= idx[d];
  for (size_t d = static_cast<size_t>(axis) + 1; d < x.size(); ++d) g.inner *= x[d];
  g.axis_size = x[static_cast<size_t>(axis)];
  return g;
}

bool is_index_type(DType d) { return d == DType::i32 || d == DType::i64 || d == DType::u32; }

std::optional<CudaKernel> gather(const OpKernelRequest& r, std::string* why) {
  const Take g = take_geometry(r);
  const int64_t count = r.outputs.at(0)->num_elements();
  if (count > 0 && g.axis_size == 0) {
    *why = cat("gather from an empty axis of ", ir::type_str(*r.inputs[0]));
    return std::nullopt;
  }
  std::string body;
  if (count > 0)
    body = cat("  for (int64_t j = gcg_tid; j < p.n; j += gcg_stride) {\n",
               "    const int64_t om = j / ", num(g.inner), ", i = j % ", num(g.inner), ";\n",
               "    const int64_t o = om / ", num(g.middle), ", m = om % ", num(g.middle), ";\n",
               "    int64_t v = (int64_t)p.in1[(o / ", num(g.per_batch), ") * ", num(g.middle), " + m];\n",
               "    v = v < 0 ? 0 : v > ", num(g.axis_size - 1), " ? ", num(g.axis_size - 1), " : v;\n",
               "    p.out0[j] = p.in0[(o * ", num(g.axis_size), " + v) * ", num(g.inner), " + i];\n",
               "  }\n");
  return frame_kernel(cat("gather of ", ir::type_str(*r.inputs[0]), " at ", ir::type_str(*r.inputs[1])), r, count, body);
}

std::optional<CudaKernel> scatter_add(const OpKernelRequest& r, std::string* why) {
  const DType d = r.inputs.at(0)->dtype;
  if (d == DType::bool_) {
    *why = "scatter_add of a bool operand";
    return std::nullopt;
  }
  const Take g = take_geometry(r);
  const int64_t columns = r.outputs.at(0)->num_elements() == 0 ? 0 : g.outer * g.inner;
  const std::string t = ctype(d);
  std::string body;
  if (columns > 0)
    body = cat("  for (int64_t c = gcg_tid; c < p.n; c += gcg_stride) {\n",
               "    const int64_t o = c / ", num(g.inner), ", i = c % ", num(g.inner), ";\n",
               "    ", t, "* y = p.out0 + o * ", num(g.axis_size * g.inner), " + i;\n",
               "    const int64_t first = (o / ", num(g.per_batch), ") * ", num(g.middle), ";\n",
               "    for (int64_t m = 0; m < ", num(g.middle), "; ++m) {\n",
               "      const int64_t v = (int64_t)p.in1[first + m];\n",
               "      if (v < 0 || v >= ", num(g.axis_size), ") continue;\n",
               "      const ", t, " a = y[v * ", num(g.inner), "], b = p.in2[(o * ", num(g.middle), " + m) * ", num(g.inner),
               " + i];\n",
               "      y[v * ", num(g.inner), "] = ", wrapping_add_expr(d, "a", "b"), ";\n",
               "    }\n",
               "  }\n");
  CudaKernel k =
      frame_kernel(cat("scatter_add into ", ir::type_str(*r.inputs[0]), " at ", ir::type_str(*r.inputs[1])), r, columns, body);
  k.copy_before = {{0, 0}};  // the output starts as the operand
  return k;
}

// `const int64_t st<d> = ...;` for each axis: the clamped window starts,
// read from the scalar operands first, first+1, ...
std::string clamped_starts(size_t first, const Shape& shape, const Shape& window) {
  std::string out;
  for (size_t d = 0; d < shape.size(); ++d)
    out += cat("  int64_t st", num(static_cast<int64_t>(d)), " = (int64_t)p.in", num(static_cast<int64_t>(first + d)),
               "[0];\n  st", num(static_cast<int64_t>(d)), " = st", num(static_cast<int64_t>(d)), " < 0 ? 0 : st",
               num(static_cast<int64_t>(d)), " > ", num(shape[d] - window[d]), " ? ", num(shape[d] - window[d]), " : st",
               num(static_cast<int64_t>(d)), ";\n");
  out += "  const int64_t base = 0";
  const std::vector<int64_t> st = interpreter::row_major_strides(shape);
  for (size_t d = 0; d < shape.size(); ++d) out += cat(" + st", num(static_cast<int64_t>(d)), " * ", num(st[d]));
  return out + ";\n  (void)base;\n";
}

bool starts_are_indices(const OpKernelRequest& r, size_t first, std::string* why) {
  for (size_t k = first; k < r.inputs.size(); ++k)
    if (!is_index_type(r.inputs[k]->dtype) || r.inputs[k]->num_elements() != 1) {
      *why = cat(ir::op_name(r.op), ": start operand ", num(static_cast<int64_t>(k)), " is ", ir::type_str(*r.inputs[k]));
      return false;
    }
  return true;
}

std::optional<CudaKernel> dynamic_slice(const OpKernelRequest& r, std::string* why) {
  if (!starts_are_indices(r, 1, why)) return std::nullopt;
  const Shape& shape = r.inputs.at(0)->shape;
  const Shape& window = r.outputs.at(0)->shape;
  const int64_t count = r.outputs[0]->num_elements();
  std::string body;
  if (count > 0)
    body = cat(clamped_starts(1, shape, window),
               "  for (int64_t j = gcg_tid; j < p.n; j += gcg_stride)\n",
               "    p.out0[j] = p.in0[base + ", offset_expr(window, interpreter::row_major_strides(shape), "j"), "];\n");
  return frame_kernel(cat("dynamic_slice of ", ir::type_str(*r.inputs[0]), " to ", ir::type_str(*r.outputs[0])), r,
                      count, body);
}

std::optional<CudaKernel> dynamic_update_slice(const OpKernelRequest& r, std::string* why) {
  if (!starts_are_indices(r, 2, why)) return std::nullopt;
  const Shape& shape = r.inputs.at(0)->shape;
  const Shape& window = r.inputs.at(1)->shape;
  const int64_t count = r.outputs.at(0)->num_elements(), updates = r.inputs[1]->num_elements();
  const std::vector<int64_t> strides = interpreter::row_major_strides(shape);
  const std::vector<int64_t> window_strides = interpreter::row_major_strides(window);
  std::string body;
  if (count > 0) {
    body = clamped_starts(2, shape, window);
    // In place, only the window changes.
    body += "  if ((const void*)p.out0 == (const void*)p.in0) {\n";
    if (updates > 0)
      body += cat("    for (int64_t j = gcg_tid; j < ", num(updates), "; j += gcg_stride) p.out0[base + ",
                  offset_expr(window, strides, "j"), "] = p.in1[j];\n");
    body += "    return;\n  }\n";
    body += "  for (int64_t j = gcg_tid; j < p.n; j += gcg_stride) {\n    int64_t rest = j, at = 0;\n    bool inside = true;\n";
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      const size_t a = static_cast<size_t>(d);
      const std::string k = cat("k", num(d));
      body += cat("    const int64_t ", k, " = rest % ", num(shape[a]), " - st", num(d), ";\n", "    rest /= ",
                  num(shape[a]), ";\n", "    inside = inside && ", k, " >= 0 && ", k, " < ", num(window[a]), ";\n",
                  "    at += ", k, " * ", num(window_strides[a]), ";\n");
    }
    body += "    (void)rest;\n    p.out0[j] = inside ? p.in1[at] : p.in0[j];\n  }\n";
  }
  return frame_kernel(cat("dynamic_update_slice of ", ir::type_str(*r.inputs[0]), " by ", ir::type_str(*r.inputs[1])),
                      r, count, body);
}

}  // namespace

std::optional<CudaKernel> indexing_kernel(const OpKernelRequest& r, std::string* why) {
  if ((r.op == Op::gather || r.op == Op::scatter_add) && !is_index_type(r.inputs.at(1)->dtype)) {
    *why = cat(ir::op_name(r.op), ": indices of ", ir::type_str(*r.inputs[1]));
    return std::nullopt;
  }
  switch (r.op) {
    case Op::gather: return gather(r, why);
    case Op::scatter_add: return scatter_add(r, why);
    case Op::dynamic_slice: return dynamic_slice(r, why);
    case Op::dynamic_update_slice: return dynamic_update_slice(r, why);
    default: *why = cat(ir::op_name(r.op), " has no CUDA op kernel"); return std::nullopt;
  }
}

}  // namespace graft::codegen::cuda::detail
