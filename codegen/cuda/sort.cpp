// The CUDA kernels of sort and top_k (op_kernels.h). sort: lines along `dimension` ordered by
// the first num_keys operands lexicographically, NaN after every number, and
// stable — the interpreter's order (interpreter/kernels/sort.cpp), which a
// stable sort makes unique. One thread per element ranks it in its line
// (how many elements come before it: smaller, or equal and earlier) and
// writes every operand's element at that rank: no scratch memory, no
// synchronisation, O(n) work per element. Lines long enough for that to be
// too slow are refused (they sort on the host). top_k ranks each element
// of a last-axis line the same way in descending order (NaN first, +0 before
// -0, ties by index, as the interpreter's partial sort) and writes the first k ranks.
#include "codegen/cpu/cpp_text.h"
#include "codegen/cuda/op_kernels.h"
#include "interpreter/kernels/layout.h"
#include "ir/attr_access.h"

namespace graft::codegen::cuda::detail {

using cpu::detail::cat;
using cpu::detail::ctype;
using cpu::detail::num;

namespace {

// Above this many comparisons (elements x line length) the ranking sort is
// refused: 2^36 is about a tenth of a second on a current GPU.
constexpr int64_t kMaxComparisons = int64_t{1} << 36;

// -1, 0, 1 as the interpreter compares two keys: NaNs equal each other and
// come after every number.
constexpr const char* kCompare = R"(#ifndef GCG_SORT_COMPARE
#define GCG_SORT_COMPARE 1
template <class T>
GCG_FN int gcg_sort_compare(T u, T v) {
  if constexpr (gcg_t<T>::fl) {
    const bool un = u != u, vn = v != v;
    if (un || vn) return un == vn ? 0 : (un ? 1 : -1);
  }
  return u < v ? -1 : (v < u ? 1 : 0);
}
// top_k's order: sort's, with -0 below +0 (as max orders them); 1/x tells the zeros apart.
template <class T>
GCG_FN int gcg_top_k_compare(T u, T v) {
  const int c = gcg_sort_compare(u, v);
  if constexpr (gcg_t<T>::fl)
    if (c == 0 && u == T(0) && v == T(0)) {
      const T iu = T(1) / u, iv = T(1) / v;
      return iu < iv ? -1 : (iv < iu ? 1 : 0);
    }
  return c;
}
#endif
)";

}  // namespace

namespace {

// The k largest of each last-axis line: element i of a line has rank = the
// number of elements before it in descending order; ranks below k write.
std::optional<CudaKernel> top_k_kernel(const OpKernelRequest& r, std::string* why) {
  const ir::ValueType& x = *r.inputs.at(0);
  const int64_t k = ir::attr<int64_t>(r.attrs, "k", r.op);
  const int64_t n = x.shape.back(), total = x.num_elements();
  if (total > 0 && total > kMaxComparisons / n) {
    *why = cat("top_k of ", ir::type_str(x), ": ranking lines of ", num(n), " would take ", num(total), " x ", num(n),
               " comparisons");
    return std::nullopt;
  }
  std::string body;
  if (total > 0 && k > 0) {
    body = cat("  for (int64_t t = gcg_tid; t < p.n; t += gcg_stride) {\n", "    const int64_t line = t / ", num(n),
               ", i = t % ", num(n), ", base = line * ", num(n), ";\n", "    const ", ctype(x.dtype),
               " key = p.in0[t];\n", "    int64_t rank = 0;\n", "    for (int64_t j = 0; j < ", num(n), "; ++j) {\n",
               "      const int c = gcg_top_k_compare(p.in0[base + j], key);  // NaN after every number\n",
               "      rank += c > 0 || (c == 0 && j < i);\n", "    }\n", "    if (rank < ", num(k), ") {\n",
               "      p.out0[line * ", num(k), " + rank] = key;\n", "      p.out1[line * ", num(k),
               " + rank] = (int32_t)i;\n", "    }\n", "  }\n");
  }
  return frame_kernel(cat("top_k of ", ir::type_str(x), ", k = ", num(k)), r, total, body, kCompare);
}

}  // namespace

std::optional<CudaKernel> sort_kernel(const OpKernelRequest& r, std::string* why) {
  if (r.op == ir::Op::top_k) return top_k_kernel(r, why);
  const ir::ValueType& first = *r.inputs.at(0);
  const size_t dim = static_cast<size_t>(ir::attr<int64_t>(r.attrs, "dimension", r.op));
  const int64_t keys = ir::attr<int64_t>(r.attrs, "num_keys", r.op);
  const int64_t total = first.num_elements();
  const int64_t n = first.shape[dim];
  if (total > 0 && total > kMaxComparisons / n) {
    *why = cat("sort of ", ir::type_str(first), ": ranking lines of ", num(n), " would take ", num(total), " x ", num(n),
               " comparisons");
    return std::nullopt;
  }
  const std::vector<int64_t> strides = interpreter::row_major_strides(first.shape);
  std::vector<int64_t> outer = first.shape, outer_strides = strides;
  outer.erase(outer.begin() + static_cast<std::ptrdiff_t>(dim));
  outer_strides.erase(outer_strides.begin() + static_cast<std::ptrdiff_t>(dim));
  const std::string S = num(strides[dim]);
  std::string body;
  if (total > 0) {
    body = cat("  for (int64_t t = gcg_tid; t < p.n; t += gcg_stride) {\n",
               "    const int64_t line = t / ", num(n), ", i = t % ", num(n), ";\n",
               "    const int64_t base = ", offset_expr(outer, outer_strides, "line"), ";\n");
    for (int64_t k = 0; k < keys; ++k)
      body += cat("    const ", ctype(r.inputs[static_cast<size_t>(k)]->dtype), " key", num(k), " = p.in", num(k),
                  "[base + i * ", S, "];\n");
    body += cat("    int64_t rank = 0;\n",
                "    for (int64_t j = 0; j < ", num(n), "; ++j) {\n",
                "      int c = 0;\n");
    for (int64_t k = 0; k < keys; ++k)
      body += cat("      ", k == 0 ? "" : "if (c == 0) ", "c = gcg_sort_compare(p.in", num(k), "[base + j * ", S, "], key",
                  num(k), ");\n");
    body += cat("      rank += c < 0 || (c == 0 && j < i);\n",
                "    }\n");
    for (size_t k = 0; k < r.inputs.size(); ++k)
      body += cat("    p.out", num(static_cast<int64_t>(k)), "[base + rank * ", S, "] = p.in", num(static_cast<int64_t>(k)),
                  "[base + i * ", S, "];\n");
    body += "  }\n";
  }
  return frame_kernel(cat("sort of ", ir::type_str(first), " by ", num(keys), " key(s) of ",
                          num(static_cast<int64_t>(r.inputs.size())), " operand(s)"),
                      r, total, body, kCompare);
}

}  // namespace graft::codegen::cuda::detail
