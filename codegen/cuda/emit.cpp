// The CUDA code generator for fused bodies (see emit.h). What a body may
// hold is decided once, by the CPU emitter's schedule (codegen/cpu/
// schedule.h: both emitters take the same bodies); this file turns the
// body's plan into one CUDA kernel.
//
// Inside a kernel, `at(i)` computes element i of the iteration space: the
// body's values in plan order (uniforms once per thread, before any loop;
// views read through their strides: literals, or parameters), stores the
// outputs computed per element and returns the value a trailing reduction
// reduces. The drivers differ only in which i a thread visits and how the
// reduction combines.
#include "codegen/cuda/emit.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <sstream>

#include "codegen/cpu/cpp_text.h"
#include "codegen/cpu/emit.h"
#include "codegen/cpu/schedule.h"
#include "codegen/cuda/elementwise.h"
#include "codegen/cuda/prelude.h"
#include "codegen/embedded_text.h"
#include "graft/errors.h"
#include "interpreter/kernels/ordered_sum.h"
#include "interpreter/kernels/sum_order.h"

namespace graft::codegen::cuda {
namespace {

using cpu::detail::cat;
using cpu::detail::compute_ctype;
using cpu::detail::compute_dtype;
using cpu::detail::ctype;
using cpu::detail::load_expr;
using cpu::detail::num;
using cpu::detail::store_expr;
using ir::FusedValue;
using ir::Op;
using ir::OutputStore;
using ir::ValueClass;

[[noreturn]] void fail(const std::string& why) { throw UnsupportedError("cuda codegen: " + why); }

class Emitter {
 public:
  Emitter(const ir::Graph& g, const std::string& sym, Sizes sizes)
      : g_(g), sym_(sym), s_(checked_schedule(g)), params_(sizes == Sizes::parameters) {}

  CudaKernel run() {
    CudaKernel k;
    k.symbol = sym_;
    k.num_inputs = static_cast<int>(g_.inputs().size());
    k.num_outputs = static_cast<int>(g_.outputs().size());
    k.scalars = cpu::kernel_constants(g_);
    k.n = plan().N;
    choose_shape(&k);

    // The body first: it collects the sizes the parameters carry (Sizes::parameters).
    std::ostringstream body;
    body << "  const int64_t gcg_tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;\n";
    body << "  const int64_t gcg_stride = (int64_t)gridDim.x * blockDim.x;\n";
    body << "  (void)gcg_tid;\n  (void)gcg_stride;\n";
    body << uniforms();
    body << other_stores();
    body << at_fn();
    body << driver(k);
    k.sizes = sizes_;
    std::ostringstream os;
    // (N is not written: the kernel takes it as p.n, so its source serves every size of a batch.)
    os << prelude_text();
    if (has_complex()) os << cuda_complex_ops_text();
    os << "\n// ---- kernel " << sym_ << ": " << shape_name(k.shape) << "\n";
    os << params_struct(k);
    os << "extern \"C\" __global__ void __launch_bounds__(GCG_THREADS) " << sym_ << "(const " << sym_ << "_params p) {\n";
    os << body.str();
    os << "}\n";
    os << "#ifdef GCG_EMULATED\nGCG_EXPORT void " << sym_ << "_emulated(const void* p) { " << sym_ << "(*static_cast<const "
       << sym_ << "_params*>(p)); }\n#endif\n";
    k.source = os.str();
    return k;
  }

 private:
  static cpu::detail::Schedule checked_schedule(const ir::Graph& g) {
    cpu::detail::Schedule s;
    try {
      s = cpu::detail::schedule(g, &op_expr);
    } catch (const UnsupportedError& e) {
      refuse_as_cuda(e);
    }
    return s;
  }

  // Complex values anywhere in the body: the module gets complex_ops.h's text.
  bool has_complex() const {
    return std::any_of(plan().values.begin(), plan().values.end(),
                       [](const FusedValue& v) { return ir::is_complex(v.dtype); });
  }

  static const char* shape_name(KernelShape s) {
    switch (s) {
      case KernelShape::elementwise: return "elementwise";
      case KernelShape::rows: return "rows";
      case KernelShape::columns: return "columns";
    }
    return "?";
  }

  // A size in the source: a literal, or with Sizes::parameters the next
  // parameter p.z<k> (CudaKernel::sizes), so that the source serves every
  // size of the same form.
  std::string sz(int64_t v) const {
    if (!params_) return num(v);
    sizes_.push_back(v);
    return cat("p.z", num(static_cast<int64_t>(sizes_.size() - 1)));
  }

  const ir::FusedPlan& plan() const { return s_.plan; }
  const FusedValue& val(int v) const { return plan().value(v); }
  bool has_red() const { return s_.red >= 0; }
  const ir::FusedReduction& red() const { return s_.reduction(); }
  Op red_op() const { return red().node->op; }
  DType red_dtype() const { return val(red().in).dtype; }
  // The type a reduction accumulates in: a half's in f32, rounded once when stored.
  std::string RT() const { return compute_ctype(red_dtype()); }

  void choose_shape(CudaKernel* k) const {
    if (!has_red()) {
      k->shape = KernelShape::elementwise;
      k->work = plan().N;
      return;
    }
    const std::vector<ir::ReductionGroup>& G = red().groups;
    const bool inner_reduced = G.empty() || G.back().reduced;
    k->shape = inner_reduced ? KernelShape::rows : KernelShape::columns;
    k->work = val(red().out).count;
  }

  std::string params_struct(const CudaKernel& k) const {
    std::ostringstream os;
    os << "struct " << sym_ << "_params {\n";
    // An output may take a dying input's buffer (codegen/memory_plan.cpp).
    // With one output its store depends on every read; with more, a store
    // of one output could be scheduled before a read of the input another
    // output needs, were the inputs declared __restrict__ (they alias).
    const char* restrict = k.num_outputs == 1 ? "* __restrict__ in" : "* in";
    for (int j = 0; j < k.num_inputs; ++j)
      os << "  const " << ctype(g_.type(g_.inputs()[j]).dtype) << restrict << j << ";\n";
    for (int o = 0; o < k.num_outputs; ++o) os << "  " << ctype(g_.type(g_.outputs()[o]).dtype) << "* out" << o << ";\n";
    for (size_t c = 0; c < k.scalars.size(); ++c) os << "  int64_t s" << c << ";\n";
    for (size_t c = 0; c < k.sizes.size(); ++c) os << "  int64_t z" << c << ";\n";
    os << "  int64_t n;\n};\n";
    return os.str();
  }

  std::string u(int v) const { return cat("u", num(val(v).scalar)); }

  // Element i of value v, inside at().
  std::string read(int v) const {
    const FusedValue& x = val(v);
    switch (x.cls) {
      case ValueClass::uniform: return u(v);
      case ValueClass::full: return cat("v", num(v));
      case ValueClass::view: return cat("p.in", num(x.input), "[", view_offset(x), "]");
      case ValueClass::reduced: break;
    }
    fail("a reduced value is read inside the body");
  }

  // The buffer offset of element i of a view: its merged axes' strides.
  std::string view_offset(const FusedValue& x) const {
    Shape sizes;
    std::vector<int64_t> strides;
    ir::merged_axes(x, &sizes, &strides);
    if (sizes.empty()) return "0";
    if (sizes.size() == 1 && strides[0] == 1) return "i";
    std::string off;
    int64_t inner = 1;
    for (int d = static_cast<int>(sizes.size()) - 1; d >= 0; --d) {
      std::string idx = inner == 1 ? std::string("i") : cat("(i / ", sz(inner), ")");
      if (d > 0) idx = cat("(", idx, " % ", sz(sizes[d]), ")");
      off = cat(off.empty() ? "" : cat(off, " + "), idx, strides[d] == 1 ? "" : cat(" * ", sz(strides[d])));
      inner *= sizes[d];
    }
    return off;
  }

  std::string expr(const ir::FusedStep& st, const std::function<std::string(int)>& operand) const {
    std::vector<std::string> a;
    for (int s : st.in) a.push_back(operand(s));
    const ir::Node& n = *st.node;
    const DType dt = g_.type(n.inputs[n.op == Op::select ? 1 : 0]).dtype;
    return op_expr(n.op, dt, val(st.out).dtype, a);
  }

  // Uniform values: once per thread, before any loop.
  std::string uniforms() const {
    std::ostringstream os;
    int scalar = 0;
    for (const ir::FusedStep& st : plan().steps) {
      if (st.what == ir::FusedStep::constant) {
        const FusedValue& v = val(st.out);
        os << "  const " << ctype(v.dtype) << " u" << st.out << " = gcg_bits<" << ctype(v.dtype) << ">(p.s" << scalar++
           << ");\n";
        continue;
      }
      if (st.out < 0 || val(st.out).cls != ValueClass::uniform || val(st.out).scalar != st.out) continue;
      const std::string t = ctype(val(st.out).dtype);
      if (st.what == ir::FusedStep::input)
        os << "  const " << t << " u" << st.out << " = p.in" << st.input_index << "[0];\n";
      else if (st.what == ir::FusedStep::op)
        os << "  const " << t << " u" << st.out << " = " << expr(st, [&](int o) { return u(o); }) << ";  // "
           << ir::op_name(st.node->op) << "\n";
    }
    return os.str();
  }

  // Outputs that are not one element per element of the space.
  std::string other_stores() const {
    std::ostringstream os;
    for (size_t pos = 0; pos < plan().outputs.size(); ++pos) {
      const ir::FusedOutput& o = plan().outputs[pos];
      const FusedValue& v = val(o.value);
      switch (o.store) {
        case OutputStore::scalar: os << "  if (gcg_tid == 0) p.out" << pos << "[0] = " << u(o.value) << ";\n"; break;
        case OutputStore::fill:
          os << "  for (int64_t i = gcg_tid; i < " << sz(v.count) << "; i += gcg_stride) p.out" << pos
             << "[i] = " << u(o.value) << ";\n";
          break;
        case OutputStore::copy:
          os << "  if ((const void*)p.out" << pos << " != (const void*)p.in" << v.input << ")\n";
          os << "    for (int64_t i = gcg_tid; i < " << sz(v.count) << "; i += gcg_stride) p.out" << pos << "[i] = p.in"
             << v.input << "[i];\n";
          break;
        default: break;
      }
    }
    return os.str();
  }

  std::string at_fn() const {
    std::ostringstream os;
    os << "  auto at = [&](int64_t i) -> " << (has_red() ? RT() : std::string("void")) << " {\n";
    for (const ir::FusedStep& st : plan().steps) {
      if (st.what != ir::FusedStep::op || val(st.out).cls != ValueClass::full) continue;
      os << "    const " << ctype(val(st.out).dtype) << " v" << st.out << " = " << expr(st, [&](int o) { return read(o); })
         << ";  // " << ir::op_name(st.node->op) << "\n";
    }
    // Every read before any write: an output may alias an input.
    std::vector<std::string> stores;
    for (size_t pos = 0; pos < plan().outputs.size(); ++pos) {
      const ir::FusedOutput& o = plan().outputs[pos];
      if (o.store != OutputStore::loop) continue;
      os << "    const " << ctype(val(o.value).dtype) << " s" << pos << " = " << read(o.value) << ";\n";
      stores.push_back(cat("    p.out", num(static_cast<int64_t>(pos)), "[i] = s", num(static_cast<int64_t>(pos)), ";\n"));
    }
    for (const std::string& line : stores) os << line;
    if (has_red())
      os << "    return " << load_expr(red_dtype(), read(red().in)) << ";\n";
    else os << "    (void)i;\n";
    os << "  };\n";
    return os.str();
  }

  std::string identity() const {
    const std::string t = RT();
    const bool sum = red_op() == Op::reduce_sum, max = red_op() == Op::reduce_max;
    switch (compute_dtype(red_dtype())) {
      case DType::bool_: return max ? "false" : "true";
      case DType::f32: return sum ? "0.0f" : max ? "-gcg_inf_f32()" : "gcg_inf_f32()";
      case DType::f64: return sum ? "0.0" : max ? "-gcg_inf_f64()" : "gcg_inf_f64()";
      default: return sum ? cat("(", t, ")0") : cat("gcg_t<", t, ">::", max ? "lo" : "hi");
    }
  }
  std::string combine() const {
    if (red_op() == Op::reduce_sum) return cat("gcg_sum<", RT(), ">");
    return cat(red_op() == Op::reduce_max ? "gcg_rmax<" : "gcg_rmin<", RT(), ">");
  }

  // The input offset of output element o's first element (kept groups) and
  // of reduced element r relative to it (reduced groups, row-major).
  std::string offset_of(bool reduced, const char* var) const {
    const std::vector<ir::ReductionGroup>& G = red().groups;
    std::string off;
    int64_t inner = 1;
    int outermost = -1;  // of this kind: its index never wraps, so its size is not written
    for (int d = 0; d < static_cast<int>(G.size()) && outermost < 0; ++d)
      if (G[d].reduced == reduced) outermost = d;
    for (int d = static_cast<int>(G.size()) - 1; d >= 0; --d) {
      if (G[d].reduced != reduced) continue;
      std::string idx = inner == 1 ? std::string(var) : cat("(", var, " / ", sz(inner), ")");
      if (d != outermost) idx = cat("(", idx, " % ", sz(G[d].size), ")");
      off = cat(off.empty() ? "" : cat(off, " + "), idx, " * ", sz(G[d].in_stride));
      inner *= G[d].size;
    }
    return off.empty() ? "0" : off;
  }

  // gcg_work (output elements) and gcg_R (elements per output): the one of
  // them holding the leading group (a batch) from p.n at run time, so that
  // the source does not hold that group's size; the other a size (sz).
  std::string sizes(const CudaKernel& k, int64_t R) const {
    const std::vector<ir::ReductionGroup>& G = red().groups;
    const bool kept_leads = !G.empty() && !G[0].reduced;
    if (G.empty() || R == 0 || k.work == 0)
      return cat("  const int64_t gcg_work = ", sz(k.work), ", gcg_R = ", sz(R), ";\n");
    if (kept_leads) return cat("  const int64_t gcg_R = ", sz(R), ", gcg_work = p.n / gcg_R;\n");
    return cat("  const int64_t gcg_work = ", sz(k.work), ", gcg_R = p.n / gcg_work;\n");
  }

  std::string write_reduced(const std::string& value) const {
    std::string out;
    for (size_t pos : red().outputs)
      out += cat("p.out", num(static_cast<int64_t>(pos)), "[o] = ", store_expr(red_dtype(), value), "; ");
    return out;
  }

  std::string driver(const CudaKernel& k) const {
    std::ostringstream os;
    if (!has_red()) {
      os << "  for (int64_t i = gcg_tid; i < p.n; i += gcg_stride) at(i);\n";
      return os.str();
    }
    const std::string t = RT();
    int64_t R = 1;
    for (const ir::ReductionGroup& gr : red().groups)
      if (gr.reduced) R *= gr.size;
    os << sizes(k, R);
    if (interpreter::ordered_sum(red_op(), red_dtype())) return os.str() + ordered_sum_driver(k, R);
    os << "  auto combine = [](" << t << " a, " << t << " b) { return " << combine() << "(a, b); };\n";
    if (k.shape == KernelShape::columns) {
      os << "  // one thread per output element, its gcg_R elements in order\n";
      os << "  for (int64_t o = gcg_tid; o < gcg_work; o += gcg_stride) {\n";
      os << "    const int64_t base = " << offset_of(false, "o") << ";\n";
      os << "    " << t << " acc = " << identity() << ";\n";
      os << "    for (int64_t r = 0; r < gcg_R; ++r) acc = combine(acc, at(base + " << offset_of(true, "r") << "));\n";
      os << "    " << write_reduced("acc") << "\n  }\n";
      return os.str();
    }
    os << "  // one block per output element, its gcg_R elements combined in a fixed tree\n";
    os << "  __shared__ " << t << " gcg_part[32];\n";
    os << "  for (int64_t o = blockIdx.x; o < gcg_work; o += gridDim.x) {\n";
    os << "    const int64_t base = " << offset_of(false, "o") << ";\n";
    os << "    " << t << " acc = " << identity() << ";\n";
    os << "    for (int64_t r = threadIdx.x; r < gcg_R; r += blockDim.x) acc = combine(acc, at(base + "
       << offset_of(true, "r") << "));\n";
    os << "    acc = gcg_block_reduce<" << t << ">(acc, " << identity() << ", combine, gcg_part);\n";
    os << "    if (threadIdx.x == 0) { " << write_reduced("acc") << "}\n  }\n";
    return os.str();
  }

  // A float sum in sum_order.h's order (the interpreter's bits). Columns: one
  // thread per output. Rows: thread t of a block sums the t-th piece of its
  // row, a run of a power of two of row blocks (a subtree), and thread 0
  // combines the pieces as sum_order's tree.
  std::string ordered_sum_driver(const CudaKernel& k, int64_t R) const {
    std::ostringstream os;
    const std::string t = RT();
    if (k.shape == KernelShape::columns) {
      os << "  // one thread per output element: a column of gcg_R in sum_order's order\n";
      os << "  for (int64_t o = gcg_tid; o < gcg_work; o += gcg_stride) {\n";
      os << "    const int64_t base = " << offset_of(false, "o") << ";\n";
      os << "    const " << t << " acc = graft::sum_order::column_sum_by<" << t
         << ">([&](int64_t r) { return at(base + " << offset_of(true, "r") << "); }, gcg_R);\n";
      os << "    " << write_reduced("acc") << "\n  }\n";
      return os.str();
    }
    if (R == 0) {
      os << "  for (int64_t o = gcg_tid; o < gcg_work; o += gcg_stride) { " << write_reduced("(" + t + ")0") << "}\n";
      return os.str();
    }
    // Pieces of a power of two of row blocks, at most one per thread (computed here: R may be g0).
    os << "  int64_t piece = " << sum_order::kRowBlock << ";\n";
    os << "  while (piece * " << kThreadsPerBlock << " < gcg_R) piece *= 2;\n";
    os << "  const int64_t pieces = (gcg_R + piece - 1) / piece;\n";
    os << "  // one block per output element: its pieces, one per thread, combined in sum_order's tree\n";
    os << "  __shared__ " << t << " gcg_piece[GCG_THREADS];\n";
    os << "  for (int64_t o = blockIdx.x; o < gcg_work; o += gridDim.x) {\n";
    os << "    const int64_t base = " << offset_of(false, "o") << ";\n";
    os << "    const int64_t lo = (int64_t)threadIdx.x * piece;\n";
    os << "    if (threadIdx.x < pieces) {\n";
    os << "      const int64_t n = gcg_R - lo < piece ? gcg_R - lo : piece;\n";
    os << "      gcg_piece[threadIdx.x] = graft::sum_order::row_sum_by<" << t << ">([&](int64_t i) { const int64_t r = lo + i; return at(base + "
       << offset_of(true, "r") << "); }, n);\n";
    os << "    }\n";
    os << "    __syncthreads();\n";
    os << "    if (threadIdx.x == 0) {\n";
    os << "      graft::sum_order::Levels<" << t << "> lv;\n";
    os << "      for (int64_t q = 0; q + 1 < pieces; ++q) lv.push(gcg_piece[q]);\n";
    os << "      const " << t << " acc = lv.finish(gcg_piece[pieces - 1]);\n";
    os << "      " << write_reduced("acc") << "\n";
    os << "    }\n";
    os << "    __syncthreads();  // gcg_piece is free again\n";
    os << "  }\n";
    return os.str();
  }

  const ir::Graph& g_;
  std::string sym_;
  cpu::detail::Schedule s_;
  bool params_ = false;
  mutable std::vector<int64_t> sizes_;  // p.z0, p.z1, ... (Sizes::parameters)
};

}  // namespace

CudaKernel emit_kernel(const ir::Graph& body, const std::string& symbol, Sizes sizes) {
  cpu::detail::check_symbol(symbol, "cuda codegen");
  return Emitter(body, symbol, sizes).run();
}

std::vector<uint64_t> kernel_params(const CudaKernel& k, const std::vector<const void*>& inputs,
                                    const std::vector<void*>& outputs) {
  if (static_cast<int>(inputs.size()) != k.num_inputs || static_cast<int>(outputs.size()) != k.num_outputs)
    throw Error("cuda kernel " + k.symbol + ": " + std::to_string(inputs.size()) + " inputs and " +
                std::to_string(outputs.size()) + " outputs given, " + std::to_string(k.num_inputs) + " and " +
                std::to_string(k.num_outputs) + " expected");
  std::vector<uint64_t> p;
  p.reserve(inputs.size() + outputs.size() + k.scalars.size() + k.sizes.size() + 1);
  for (const void* x : inputs) p.push_back(reinterpret_cast<uint64_t>(x));
  for (void* y : outputs) p.push_back(reinterpret_cast<uint64_t>(y));
  for (int64_t s : k.scalars) p.push_back(static_cast<uint64_t>(s));
  for (int64_t z : k.sizes) p.push_back(static_cast<uint64_t>(z));
  p.push_back(static_cast<uint64_t>(k.n));
  return p;
}

size_t source_hash(const CudaKernel& k) { return k.source_hash ? k.source_hash : std::hash<std::string>{}(k.source); }

int64_t grid_blocks(const CudaKernel& k, int64_t max_blocks) {
  const int64_t want = k.shape == KernelShape::rows ? k.work : (k.work + kThreadsPerBlock - 1) / kThreadsPerBlock;
  return std::clamp<int64_t>(want, 1, std::max<int64_t>(max_blocks, 1));
}

}  // namespace graft::codegen::cuda
