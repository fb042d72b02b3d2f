// Dispatch to the family files, and what they share: the kernel frame, the
// offset arithmetic and the wrapping steps (op_kernels.h).
#include "codegen/cuda/op_kernels.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <sstream>

#include "codegen/cpu/cpp_text.h"
#include "codegen/cpu/schedule.h"
#include "codegen/cuda/prelude.h"
#include "codegen/embedded_text.h"
#include "ir/dtype.h"

namespace graft::codegen::cuda {

using cpu::detail::cat;
using cpu::detail::ctype;
using cpu::detail::num;

bool has_op_kernel(ir::Op op) { return ir::codegen_kind(op) == ir::CodegenKind::op_kernel; }

std::optional<CudaKernel> op_kernel(const OpKernelRequest& r, std::string* why) {
  if (!has_op_kernel(r.op)) {
    if (why) *why = std::string(ir::op_name(r.op)) + " has no CUDA op kernel";
    return std::nullopt;
  }
  // The kernels that compute on elements have no code for the halves or
  // complex numbers yet; those that only move elements move them whole (a
  // complex value as complex_device.h's type). The host runs the other nodes.
  const bool moves_only =
      r.op == ir::Op::gather || r.op == ir::Op::dynamic_slice || r.op == ir::Op::dynamic_update_slice;
  auto generated = [&](const ir::ValueType* t) {
    return moves_only || (!ir::is_complex(t->dtype) && !ir::is_half(t->dtype));
  };
  if (!std::all_of(r.inputs.begin(), r.inputs.end(), generated) ||
      !std::all_of(r.outputs.begin(), r.outputs.end(), generated)) {
    if (why) *why = "no CUDA code for f16, bf16 or complex elements in this kernel yet";
    return std::nullopt;
  }
  std::string reason;
  std::optional<CudaKernel> k;
  switch (ir::op_info(r.op).family) {
    case ir::OpFamily::indexing: k = detail::indexing_kernel(r, &reason); break;
    case ir::OpFamily::sort: k = detail::sort_kernel(r, &reason); break;
    case ir::OpFamily::random: k = detail::random_kernel(r, &reason); break;
    case ir::OpFamily::creation: k = detail::creation_kernel(r, &reason); break;
    case ir::OpFamily::window: k = detail::window_kernel(r, &reason); break;
    case ir::OpFamily::conv: k = detail::conv_kernel(r, &reason); break;
    default: k = detail::reduce_kernel(r, &reason); break;
  }
  if (!k && why) *why = reason;
  return k;
}

void name_after_source(CudaKernel* k, const std::string& placeholder) {
  char name[32];
  std::snprintf(name, sizeof name, "gk_%016zx", std::hash<std::string>{}(k->source));
  for (size_t at = k->source.find(placeholder); at != std::string::npos; at = k->source.find(placeholder, at))
    k->source.replace(at, placeholder.size(), name);
  k->symbol = name;
  k->source_hash = std::hash<std::string>{}(k->source);
}

namespace detail {

CudaKernel frame_kernel(const std::string& what, const OpKernelRequest& r, int64_t threads, const std::string& body,
                        const std::string& helpers) {
  static const std::string kSym = "gk_symbol_placeholder";
  CudaKernel k;
  k.shape = KernelShape::elementwise;
  k.work = k.n = threads;
  k.num_inputs = static_cast<int>(r.inputs.size());
  k.num_outputs = static_cast<int>(r.outputs.size());
  std::ostringstream os;
  os << prelude_text();
  auto complex = [](const ir::ValueType* t) { return ir::is_complex(t->dtype); };
  if (std::any_of(r.inputs.begin(), r.inputs.end(), complex) ||
      std::any_of(r.outputs.begin(), r.outputs.end(), complex))
    os << cuda_complex_ops_text();
  os << helpers << "\n// ---- kernel " << kSym << ": " << what << " (codegen/cuda/op_kernels.h)\n";
  // No __restrict__: scatter_add, dynamic_update_slice and the cumulative
  // ops may write their operand's buffer in place.
  os << "struct " << kSym << "_params {\n";
  for (size_t j = 0; j < r.inputs.size(); ++j) os << "  const " << ctype(r.inputs[j]->dtype) << "* in" << j << ";\n";
  for (size_t o = 0; o < r.outputs.size(); ++o) os << "  " << ctype(r.outputs[o]->dtype) << "* out" << o << ";\n";
  os << "  int64_t n;\n};\n";
  os << "extern \"C\" __global__ void __launch_bounds__(GCG_THREADS) " << kSym << "(const " << kSym << "_params p) {\n";
  os << "  const int64_t gcg_tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;\n";
  os << "  const int64_t gcg_stride = (int64_t)gridDim.x * blockDim.x;\n";
  os << "  (void)gcg_tid;\n  (void)gcg_stride;\n";
  os << body << "}\n";
  os << "#ifdef GCG_EMULATED\nGCG_EXPORT void " << kSym << "_emulated(const void* p) { " << kSym << "(*static_cast<const "
     << kSym << "_params*>(p)); }\n#endif\n";
  k.source = os.str();
  name_after_source(&k, kSym);
  return k;
}

std::string offset_expr(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, const std::string& var) {
  int64_t all = 1;
  for (int64_t s : sizes) all *= s;
  std::string off;
  int64_t inner = 1;
  for (int d = static_cast<int>(sizes.size()) - 1; d >= 0; --d) {
    const size_t a = static_cast<size_t>(d);
    if (sizes[a] == 1) continue;  // index 0 on this axis
    std::string idx = inner == 1 ? var : cat("(", var, " / ", num(inner), ")");
    inner *= sizes[a];
    if (inner != all) idx = cat("(", idx, " % ", num(sizes[a]), ")");  // the outermost axis needs no wrap
    off = cat(off.empty() ? "" : cat(off, " + "), idx, strides[a] == 1 ? "" : cat(" * ", num(strides[a])));
  }
  return off.empty() ? "0" : cat("(", off, ")");
}

namespace {

// a <op> b with signed integers wrapping (through their unsigned type); for
// bool, `+` is || and `*` is &&, as the interpreter's gcg_wrap_add/mul give.
std::string wrapping_expr(DType d, const char* op, const char* bool_op, const std::string& a, const std::string& b) {
  switch (d) {
    case DType::bool_: return cat("(", a, " ", bool_op, " ", b, ")");
    case DType::i8:
    case DType::i16:
    case DType::i32:
    case DType::i64:
    case DType::u8:
    case DType::u16: {
      const std::string w = cpu::detail::wrap_type(d);
      return cat("(", ctype(d), ")((", w, ")", a, " ", op, " (", w, ")", b, ")");
    }
    default: return cat("(", a, " ", op, " ", b, ")");
  }
}

}  // namespace

std::string wrapping_add_expr(DType d, const std::string& a, const std::string& b) {
  return wrapping_expr(d, "+", "||", a, b);
}

std::string wrapping_mul_expr(DType d, const std::string& a, const std::string& b) {
  return wrapping_expr(d, "*", "&&", a, b);
}

}  // namespace detail
}  // namespace graft::codegen::cuda
