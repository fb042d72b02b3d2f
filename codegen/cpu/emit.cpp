// The CPU code generator for fused elementwise kernels (see emit.h).
//
// Shape of an emitted kernel
// --------------------------
// The body's plan (ir/fused_plan.h) says what each value is: uniform, view,
// full or reduced; the schedule (schedule.h) what the emitter does with it:
//   uniform  a scalar u<ord> computed once per call, before any loop (its
//            readers read the scalar; a call stage reads it filled into an
//            array); an op on uniforms of more than one element is computed
//            per element instead, like a full value;
//   view     an element index into an input buffer, its strides kernel
//            sizes (z[k], read at run time);
//   full     computed per element of the iteration space [0, N).
//
// Values computed per element are computed per block of kBlock elements. A
// block runs in stages: an inline stage is one `#pragma omp simd` loop
// computing a run of ops in registers; an op the interpreter computes with
// Eigen (math.h: exp, log, tanh, sqrt, ...) is a call stage, one call of
// graft's Eigen function on the whole block. Values that cross stages live in
// per-block arrays on the stack (t<N>[]); views that are not contiguous are
// gathered into per-block arrays (g<N>[]) once per block. The last stage is inline
// and stores every output (after all of the block's reads, so an output may
// alias an input).
//
// A call stage runs on the block widened to multiples of 16 elements
// (clipped to N) in a 64-byte aligned array: the math table's functions give
// every element the same bits wherever it lies (interpreter/kernels/
// float_math.h), and whole packets spare them a padded tail per block.
// Stages before the last call stage therefore run on the widened range
// [xlo, xhi); the widening elements are computed and discarded.
//
// A trailing reduction receives, per block, the values it reduces (`red`);
// the reduced input's axes, without size-1 axes and with neighbouring axes
// of one kind (kept / reduced) merged, form groups. With no kept group it is
// a full reduction: chunks of kSumChunk elements reduce in parallel and
// their results combine in chunk order. Otherwise one kept group is split
// across threads, and each output element receives its elements in the
// interpreter's order (row-major over the reduced axes), so results are
// exact. Float sums are in sum_order.h's order (its text is spliced into the
// prelude), over [outer, reduced, inner] only (the schedule refuses sums over
// non-adjacent axes, which run on the interpreter): a row in runs of
// kBlock-element row blocks, chunks of kSumChunk (subtrees) in parallel; a
// column in sum_order::ColumnSums. Max and min run sequentially
// (associative, so exact), integers wrap.
//
// f16 and bf16 values are their stored bits (uint16_t) everywhere in a
// kernel, as in the interpreter's buffers: each op widens its operands to
// float and rounds its result back (elementwise.cpp), and a reduction of
// halves accumulates in float and rounds each result once at the end (its
// drivers accumulate into a float buffer: red_y_begin, red_y_end).
#include "codegen/cpu/emit.h"
#include "ir/attr_access.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <functional>
#include <set>
#include <sstream>

#include "codegen/cpu/cpp_text.h"
#include "codegen/cpu/elementwise.h"
#include "codegen/cpu/prelude.h"
#include "codegen/cpu/schedule.h"
#include "codegen/embedded_text.h"
#include "interpreter/kernels/ordered_sum.h"
#include "interpreter/kernels/sum_order.h"

namespace graft::codegen::cpu {
namespace {

static_assert(kBlock == sum_order::kRowBlock && kSumChunk % kBlock == 0 && ((kSumChunk / kBlock) & (kSumChunk / kBlock - 1)) == 0,
              "a block is one row block of sum_order.h, a chunk a power of two of them");

using namespace detail;
using ir::FusedValue;
using ir::Node;
using ir::Op;
using ir::OutputStore;
using ir::ValueClass;


class Emitter {
 public:
  Emitter(const ir::Graph& g, const std::string& sym) : g_(g), sym_(sym), p_(schedule(g)) {}

  KernelSource run() {
    std::ostringstream os;
    std::string prelude = kPrelude;
    replace(prelude, "GCG_SCALAR_OPS", scalar_ops_text());
    replace(prelude, "GCG_SUM_ORDER", sum_order_text("inline"));
    replace(prelude, "GCG_MATH_VERSION", num(kMathTableVersion));
    replace(prelude, "GCG_MATH_COUNT", num(static_cast<int64_t>(MathFn::count)));
    os << prelude;
    if (has_complex()) os << complex_prelude();
    // (N is not written here: a kernel whose loops take N at run time has one source for every size.)
    os << "\n// ---- kernel " << sym_ << "\n";
    os << "namespace {\n";
    if (p_.has_loop) {
      std::string block = block_fn();  // collects what the context must carry
      os << ctx_struct() << block;
      if (has_red()) os << run_fn();
    }
    os << "}  // namespace\n\n";
    os << entry_fn();
    return {os.str(), std::move(sizes_)};
  }

 private:
  static void replace(std::string& s, const std::string& from, const std::string& to) {
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  }

  // Complex values anywhere in the body: the module includes <complex> and complex_ops.h's text.
  bool has_complex() const {
    for (const FusedValue& v : p_.plan.values)
      if (ir::is_complex(v.dtype)) return true;
    for (const ir::Node& n : g_.nodes())
      for (ir::ValueId v : n.outputs)
        if (ir::is_complex(g_.type(v).dtype)) return true;
    return false;
  }
  static std::string complex_prelude() {
    return cat("#ifndef GRAFT_CG_COMPLEX\n#define GRAFT_CG_COMPLEX 1\n#include <complex>\nnamespace {\n",
               complex_ops_text(), "}  // namespace\n#endif  // GRAFT_CG_COMPLEX\n");
  }

  // A size in the source: the next entry of the kernel's sizes, read at run time (z[k]), so that the
  // source holds no size and serves every size that gives the same code. Sizes that shape the code (an
  // array's length, which loop runs) stay literals.
  std::string sz(int64_t v) const {
    sizes_.push_back(v);
    return cat("z[", num(static_cast<int64_t>(sizes_.size() - 1)), "]");
  }

  const FusedValue& val(int s) const { return p_.value(s); }
  std::string T(int s) const { return ctype(val(s).dtype); }
  std::string u(int ord) { return cat("u", num(ord)); }
  bool has_red() const { return p_.red >= 0; }
  // The constant nodes: the first entries of the kernel's scalars (kernel_constants).
  int64_t constants() const {
    return std::count_if(g_.nodes().begin(), g_.nodes().end(), [](const Node& n) { return n.op == Op::constant; });
  }
  Op red_op() const { return p_.reduction().node->op; }
  DType red_dtype() const { return val(p_.reduction().in).dtype; }
  int64_t red_count() const { return val(p_.reduction().out).count; }
  // The type a reduction accumulates in: a half's in f32, rounded once at the end (red_y_end).
  std::string RT() const { return compute_ctype(red_dtype()); }
  // A float sum: in sum_order.h's order, bit for bit the interpreter's.
  bool ordered() const { return interpreter::ordered_sum(red_op(), red_dtype()); }
  int64_t temp_len() const { return kBlock + 32; }
  static constexpr int64_t kMaxStackBytes = 256 << 10;

  // The element k of value s inside stage `stage` of a block.
  std::string read(int s, int stage) {
    const FusedValue& v = val(s);
    const Placement& a = p_.at[s];
    if (a.per_element) return a.stage == stage ? cat("v", num(s)) : cat("t", num(s), "[k]");
    if (v.cls == ValueClass::uniform) {
      used_uniforms_.insert(v.scalar);
      return u(v.scalar);
    }
    if (!a.gather) {
      used_inputs_.insert(v.input);
      return cat("in", num(v.input), "[xlo + k]");
    }
    return cat("g", num(s), "[k]");
  }
  // Pointer to the block's elements of value s (a call stage's operand).
  std::string ptr(int s) {
    const Placement& a = p_.at[s];
    if (a.per_element) return cat("t", num(s));
    if (a.gather) return cat("g", num(s));
    used_inputs_.insert(val(s).input);
    return cat("in", num(val(s).input), " + xlo");
  }

  std::string expr(const ir::FusedStep& st, const std::function<std::string(int)>& operand) {
    std::vector<std::string> a;
    for (int s : st.in) a.push_back(operand(s));
    const Node& n = *st.node;
    DType dt = g_.type(n.inputs[n.op == Op::select ? 1 : 0]).dtype;
    return op_expr(n.op, dt, val(st.out).dtype, a);
  }

  std::string block_fn() {
    std::ostringstream body;
    const int final_stage = static_cast<int>(p_.stages.size()) - 1;
    // Gathers and fills, over the (widened) block.
    for (size_t ord = 0; ord < p_.at.size(); ++ord) {
      if (!p_.at[ord].gather) continue;
      const FusedValue& v = val(static_cast<int>(ord));
      if (v.cls == ValueClass::uniform) {
        used_uniforms_.insert(v.scalar);
        body << "  gcg_fill<" << ctype(v.dtype) << ">(g" << ord << ", " << u(v.scalar) << ", len);\n";
      } else {
        used_inputs_.insert(v.input);
        Shape sizes;
        std::vector<int64_t> strides;
        ir::merged_axes(v, &sizes, &strides);
        // The table's sizes and strides are kernel sizes (the outermost size never wraps, every index being below
        // N: unbounded).
        const int64_t at = static_cast<int64_t>(sizes_.size());
        for (size_t i = 0; i < sizes.size(); ++i) sizes_.push_back(i ? sizes[i] : INT64_MAX);
        for (int64_t st : strides) sizes_.push_back(st);
        body << "  gcg_gather<" << ctype(v.dtype) << ">(in" << v.input << ", g" << ord << ", xlo, len, " << sizes.size()
             << ", c.z + " << at << ", c.z + " << at + static_cast<int64_t>(sizes.size()) << ");\n";
      }
    }
    for (size_t si = 0; si < p_.stages.size(); ++si) {
      const Stage& st = p_.stages[si];
      const int stage = static_cast<int>(si);
      if (st.call) {
        const ScheduledStep& ss = p_.per_element[st.steps[0]];
        const ir::FusedStep& s = p_.step(ss);
        body << "  " << op_call(*ss.math, ptr(s.in[0]), cat("t", num(s.out)), "len") << ";  // "
             << ir::op_name(s.node->op) << "\n";
        continue;
      }
      const bool last = stage == final_stage;
      body << "#pragma omp simd\n";
      body << (last ? "  for (int64_t k = s; k < e; ++k) {\n" : "  for (int64_t k = 0; k < len; ++k) {\n");
      for (size_t f : st.steps) {
        const ir::FusedStep& s = p_.step(p_.per_element[f]);
        body << "    const " << T(s.out) << " v" << s.out << " = "
             << expr(s, [&](int o) { return read(o, stage); }) << ";  // " << ir::op_name(s.node->op) << "\n";
        if (p_.at[s.out].temp) body << "    t" << s.out << "[k] = v" << s.out << ";\n";
      }
      if (last) {
        // Every read before any write: outputs may alias inputs.
        std::vector<std::string> stores;
        int n = 0;
        for (size_t pos = 0; pos < p_.plan.outputs.size(); ++pos) {
          const ir::FusedOutput& o = p_.plan.outputs[pos];
          if (o.store != OutputStore::loop) continue;
          body << "    const " << T(o.value) << " s" << n << " = " << read(o.value, stage) << ";\n";
          used_outputs_.insert(pos);
          stores.push_back(cat("    out", num(static_cast<int64_t>(pos)), "[xlo + k] = s", num(n), ";\n"));
          ++n;
        }
        if (has_red()) {
          body << "    const " << RT() << " s" << n << " = " << load_expr(red_dtype(), read(p_.reduction().in, stage))
               << ";\n";
          stores.push_back(cat("    red[k - s] = s", num(n), ";\n"));
        }
        for (const std::string& line : stores) body << line;
      }
      body << "  }\n";
    }

    std::ostringstream os;
    os << "// Computes elements [lo, hi): stores the outputs" << (has_red() ? " and the values to reduce (red[0, hi - lo))" : "")
       << ".\n";
    os << "inline void " << sym_ << "_block(const " << sym_ << "_ctx& c, int64_t lo, int64_t hi, "
       << (has_red() ? RT() : std::string("void")) << "* red) {\n";
    if (!has_red()) os << "  (void)red;\n";
    if (p_.has_calls) {
      os << "  // Widened to multiples of 16 elements: each element takes Eigen's packet path when the\n"
            "  // interpreter's does (see codegen/cpu/math.h).\n";
      os << "  const int64_t xlo = lo & ~int64_t(15), xhi = gcg_lo(c.lim, (hi + 15) & ~int64_t(15));\n";
    } else {
      os << "  const int64_t xlo = lo, xhi = hi;\n";
    }
    os << "  const int64_t len = xhi - xlo, s = lo - xlo, e = hi - xlo;\n";
    os << "  (void)len;\n";
    for (int j : used_inputs_) {
      const char* t = ctype(g_.type(g_.inputs()[j]).dtype);
      os << "  const " << t << "* in" << j << " = static_cast<const " << t << "*>(c.in[" << j << "]);\n";
    }
    for (size_t pos : used_outputs_) {
      const char* t = ctype(g_.type(g_.outputs()[pos]).dtype);
      os << "  " << t << "* out" << pos << " = static_cast<" << t << "*>(c.out[" << pos << "]);\n";
    }
    for (int ord : used_uniforms_) os << "  const " << ctype(val(ord).dtype) << " " << u(ord) << " = c." << u(ord) << ";\n";
    // Block arrays: on the stack, or in one heap block when they would make a big frame.
    std::vector<std::pair<std::string, DType>> arrays;
    for (size_t ord = 0; ord < p_.at.size(); ++ord) {
      const Placement& a = p_.at[ord];
      if (a.per_element && a.temp) arrays.push_back({cat("t", num(ord)), val(static_cast<int>(ord)).dtype});
      if (a.gather) arrays.push_back({cat("g", num(ord)), val(static_cast<int>(ord)).dtype});
    }
    auto bytes = [&](DType d) { return (temp_len() * static_cast<int64_t>(ir::dtype_size(d)) + 63) / 64 * 64; };
    int64_t total = 0;
    for (const auto& [name, d] : arrays) total += bytes(d);
    const bool heap = total > kMaxStackBytes;
    if (heap) {
      os << "  char* heap = static_cast<char*>(__builtin_malloc(" << total + 64 << "));\n";
      os << "  char* arena = gcg_align64(heap);\n";
    }
    int64_t at = 0;
    for (const auto& [name, d] : arrays) {
      if (heap) os << "  " << ctype(d) << "* " << name << " = reinterpret_cast<" << ctype(d) << "*>(arena + " << at << ");\n";
      else os << "  alignas(64) " << ctype(d) << " " << name << "[" << temp_len() << "];\n";
      at += bytes(d);
    }
    os << body.str();
    if (heap) os << "  __builtin_free(heap);\n";
    os << "}\n\n";
    return os.str();
  }

  std::string ctx_struct() {
    std::ostringstream os;
    os << "struct " << sym_
       << "_ctx {\n  const void* const* in;\n  void* const* out;\n  const int64_t* z;\n  int64_t lim;\n";
    for (int ord : used_uniforms_) os << "  " << ctype(val(ord).dtype) << " " << u(ord) << ";\n";
    os << "};\n\n";
    return os.str();
  }

  std::string identity() const {
    const std::string t = RT();
    switch (compute_dtype(red_dtype())) {
      case DType::bool_: return red_op() == Op::reduce_min ? "true" : "false";
      case DType::f32: return red_op() == Op::reduce_sum ? "0.0f" : red_op() == Op::reduce_max ? "-__builtin_inff()" : "__builtin_inff()";
      case DType::f64: return red_op() == Op::reduce_sum ? "0.0" : red_op() == Op::reduce_max ? "-__builtin_inf()" : "__builtin_inf()";
      default:
        if (red_op() == Op::reduce_sum) return cat("(", t, ")0");
        return cat("gcg_t<", t, ">::", red_op() == Op::reduce_max ? "lo" : "hi");
    }
  }
  std::string combine() const {
    if (red_op() == Op::reduce_sum) return cat("gcg_sum<", RT(), ">");
    return cat(red_op() == Op::reduce_max ? "gcg_rmax<" : "gcg_rmin<", RT(), ">");
  }

  // <sym>_run(c, lo, hi): the reduction of the contiguous elements [lo, hi).
  std::string run_fn() {
    std::ostringstream os;
    const std::string t = RT();
    os << "// Reduces the contiguous elements [lo, hi).\n";
    os << t << " " << sym_ << "_run(const " << sym_ << "_ctx& c, int64_t lo, int64_t hi) {\n";
    os << "  alignas(64) " << t << " red[" << temp_len() << "];\n";
    if (ordered()) {
      // lo is a row's start or a multiple of kSumChunk (16 row blocks) past it: a subtree.
      os << "  graft::sum_order::Levels<" << t << "> lv;\n";
      os << "  for (int64_t b = lo;; b += " << kBlock << ") {\n";
      os << "    const int64_t e = gcg_lo(hi, b + " << kBlock << ");\n";
      os << "    " << sym_ << "_block(c, b, e, red);\n";
      os << "    const " << t << " s = graft::sum_order::block_sum<" << t << ">(red, e - b);\n";
      os << "    if (e >= hi) return lv.finish(s);\n";
      os << "    lv.push(s);\n";
      os << "  }\n";
    } else if (red_op() == Op::reduce_sum) {
      os << "  " << t << " total = " << identity() << ";\n";
      os << "  for (int64_t cl = lo; cl < hi; cl += " << kSumChunk << ") {\n";
      os << "    const int64_t ch = gcg_lo(hi, cl + " << kSumChunk << ");\n";
      os << "    " << t << " lane[8] = {};\n";
      os << "    for (int64_t b = cl; b < ch; b += " << kBlock << ") {\n";
      os << "      const int64_t e = gcg_lo(ch, b + " << kBlock << "), cnt = e - b;\n";
      os << "      " << sym_ << "_block(c, b, e, red);\n";
      os << "      int64_t k = 0;\n";
      os << "      for (; k + 8 <= cnt; k += 8) {\n";
      os << "#pragma omp simd\n";
      os << "        for (int j = 0; j < 8; ++j) lane[j] = gcg_sum(lane[j], red[k + j]);\n";
      os << "      }\n";
      os << "      for (; k < cnt; ++k) lane[k & 7] = gcg_sum(lane[k & 7], red[k]);\n";
      os << "    }\n";
      os << "    " << t << " part = lane[0];\n";
      os << "    for (int j = 1; j < 8; ++j) part = gcg_sum(part, lane[j]);\n";
      os << "    total = gcg_sum(total, part);\n";
      os << "  }\n";
      os << "  return total;\n";
    } else {
      os << "  " << t << " acc = " << identity() << ";\n";
      os << "  for (int64_t b = lo; b < hi; b += " << kBlock << ") {\n";
      os << "    const int64_t e = gcg_lo(hi, b + " << kBlock << "), cnt = e - b;\n";
      os << "    " << sym_ << "_block(c, b, e, red);\n";
      os << "    for (int64_t k = 0; k < cnt; ++k) acc = " << combine() << "(acc, red[k]);\n";
      os << "  }\n";
      os << "  return acc;\n";
    }
    os << "}\n\n";
    return os.str();
  }

  std::string entry_fn() {
    std::ostringstream os;
    os << "GCG_EXPORT void " << sym_ << "(const void* const* in, void* const* out, const int64_t* sc, int64_t n) {\n";
    os << "  (void)in;\n  (void)out;\n  (void)sc;\n  (void)n;\n";
    os << "  const int64_t* z = sc + " << constants() << ";\n  (void)z;\n";
    // Uniform values, in node order.
    for (const ScheduledStep& ss : p_.once) {
      const ir::FusedStep& st = p_.step(ss);
      const std::string t = T(st.out), uo = u(st.out);
      switch (st.what) {
        case ir::FusedStep::input:
          os << "  const " << t << " " << uo << " = static_cast<const " << t << "*>(in[" << st.input_index << "])[0];\n";
          break;
        case ir::FusedStep::constant:
          os << "  const " << t << " " << uo << " = gcg_bits<" << t << ">(sc[" << ss.scalar << "]);\n";
          break;
        case ir::FusedStep::op:
          if (ss.math) {
            os << "  " << t << " " << uo << ";\n";
            os << "  " << op_call(*ss.math, cat("&", u(val(st.in[0]).scalar)), cat("&", uo), "1") << ";  // "
               << ir::op_name(st.node->op) << "\n";
          } else {
            os << "  const " << t << " " << uo << " = " << expr(st, [&](int o) { return u(val(o).scalar); })
               << ";  // " << ir::op_name(st.node->op) << "\n";
          }
          break;
        case ir::FusedStep::reduction: break;
      }
    }
    for (size_t pos = 0; pos < p_.plan.outputs.size(); ++pos) {
      const ir::FusedOutput& o = p_.plan.outputs[pos];
      const FusedValue& v = val(o.value);
      const std::string t = ctype(v.dtype);
      const std::string dst = cat("out[", num(static_cast<int64_t>(pos)), "]");
      switch (o.store) {
        case OutputStore::scalar: os << "  *static_cast<" << t << "*>(" << dst << ") = " << u(v.scalar) << ";\n"; break;
        case OutputStore::fill:
          os << "  gcg_fill<" << t << ">(static_cast<" << t << "*>(" << dst << "), " << u(v.scalar) << ", "
             << sz(v.count) << ");\n";
          break;
        case OutputStore::copy:
          os << "  if (" << dst << " != in[" << v.input << "]) __builtin_memcpy(" << dst << ", in[" << v.input << "], "
             << sz(v.count * static_cast<int64_t>(ir::dtype_size(v.dtype))) << ");\n";
          break;
        default: break;
      }
    }
    if (has_red() && !p_.has_loop) {  // nothing to reduce: N == 0
      const std::string rt = ctype(red_dtype());
      os << "  {\n    " << rt << "* y = static_cast<" << rt << "*>(out[" << red_positions()[0] << "]);\n";
      os << "    for (int64_t o = 0; o < " << sz(red_count()) << "; ++o) y[o] = " << store_expr(red_dtype(), identity())
         << ";\n  }\n";
      os << copy_reduction();
    }
    if (p_.has_loop) {
      os << "  " << sym_ << "_ctx c;\n  c.in = in;\n  c.out = out;\n  c.z = z;\n  c.lim = n;\n";
      if (has_red()) os << "  const int64_t g0 = n / " << sz(rest_of_groups()) << ";\n  (void)g0;\n";
      for (int ord : used_uniforms_) os << "  c." << u(ord) << " = " << u(ord) << ";\n";
      if (has_red()) os << reduce_driver();
      else os << elementwise_driver();
    }
    os << "}\n";
    return os.str();
  }

  const std::vector<size_t>& red_positions() const { return p_.reduction().outputs; }

  // A reduction kernel takes the size of its leading group (the outermost
  // axes: a batch) from n at run time, g0 = n / (the other groups' sizes);
  // the other groups' sizes are kernel sizes (z[k]).
  const std::vector<ir::ReductionGroup>& groups() const { return p_.reduction().groups; }
  std::string gsize(size_t i) const { return i == 0 ? std::string("g0") : sz(groups()[i].size); }
  int64_t rest_of_groups() const {
    int64_t r = 1;
    for (size_t i = 1; i < groups().size(); ++i) r *= groups()[i].size;
    return r;
  }
  // The reduction's output count: a kernel size, or g0 times the other kept groups.
  std::string red_count_expr() const {
    if (!p_.has_loop || groups().empty() || groups()[0].reduced) return sz(red_count());
    return cat("(g0 * ", sz(red_count() / groups()[0].size), ")");
  }
  // `loop` in parallel when `count` (an expression) reaches kParallelMin, else on this thread:
  // a small call stays out of libgomp altogether.
  static std::string maybe_parallel(const std::string& count, const std::string& loop) {
    return cat("  if (", count, " >= ", num(kParallelMin), ") {\n#pragma omp parallel for schedule(static)\n", loop,
               "  } else {\n", loop, "  }\n");
  }

  // y: where the drivers accumulate the reduction's results, in RT: its
  // first output, or for a half a float buffer red_y_end rounds into it.
  std::string red_y_begin() const {
    const std::string t = RT(), dst = cat("out[", num(static_cast<int64_t>(red_positions()[0])), "]");
    if (!ir::is_half(red_dtype())) return cat("  ", t, "* y = static_cast<", t, "*>(", dst, ");\n");
    return cat("  ", t, "* y = static_cast<", t, "*>(__builtin_malloc(", red_count_expr(), " * sizeof(", t, ")));\n");
  }
  std::string red_y_end() const {
    if (!ir::is_half(red_dtype())) return "";
    const std::string s = ctype(red_dtype());
    return cat("  {\n    ", s, "* yh = static_cast<", s, "*>(out[", num(static_cast<int64_t>(red_positions()[0])),
               "]);\n", "    for (int64_t o = 0; o < ", red_count_expr(),
               "; ++o) yh[o] = ", store_expr(red_dtype(), "y[o]"), ";\n", "    __builtin_free(y);\n  }\n");
  }

  std::string copy_reduction() const {
    const std::vector<size_t>& r = red_positions();
    std::ostringstream os;
    for (size_t i = 1; i < r.size(); ++i)
      os << "  __builtin_memcpy(out[" << r[i] << "], out[" << r[0] << "], " << red_count_expr() << " * "
         << ir::dtype_size(red_dtype()) << ");\n";
    return os.str();
  }

  // A full reduction's chunks of kSumChunk elements: part[nch], on the stack when few.
  std::string chunk_parts() const {
    const std::string t = RT();
    return cat("  const int64_t nch = (n + ", num(kSumChunk - 1), ") / ", num(kSumChunk), ";\n", "  ", t,
               " part_small[64];\n", "  ", t, "* part = nch <= 64 ? part_small : static_cast<", t,
               "*>(__builtin_malloc(nch * sizeof(", t, ")));\n");
  }
  std::string chunk_loop() const {
    return cat("  for (int64_t ch = 0; ch < nch; ++ch) part[ch] = ", sym_, "_run(c, ch * ", num(kSumChunk),
               ", gcg_lo(n, ch * ", num(kSumChunk), " + ", num(kSumChunk), "));\n");
  }

  std::string elementwise_driver() const {
    std::ostringstream os;
    os << "  if (n <= 0) return;\n";
    os << "  const int64_t nb = (n + " << kBlock - 1 << ") / " << kBlock << ";\n";
    const std::string loop = "  for (int64_t b = 0; b < nb; ++b) " + sym_ + "_block(c, b * " + num(kBlock) +
                             ", gcg_lo(n, b * " + num(kBlock) + " + " + num(kBlock) + "), nullptr);\n";
    os << "  if (n < " << kParallelMin << ") {\n  " << loop << "    return;\n  }\n";
    os << "#pragma omp parallel for schedule(static)\n" << loop;
    return os.str();
  }

  std::string reduce_driver() const {
    std::ostringstream os;
    const std::string t = RT();
    const auto& G = groups();
    if (ordered()) return ordered_sum_driver();
    os << red_y_begin();
    int kept_groups = 0, red_groups = 0;
    for (const ir::ReductionGroup& gr : G) (gr.reduced ? red_groups : kept_groups)++;
    if (kept_groups == 0) {
      // A full reduction: chunks in parallel, combined in chunk order.
      os << "  // full reduction: chunks combined in order\n" << chunk_parts();
      os << maybe_parallel("n", chunk_loop());
      os << "  " << t << " acc = " << identity() << ";\n";
      os << "  for (int64_t ch = 0; ch < nch; ++ch) acc = " << combine() << "(acc, part[ch]);\n";
      os << "  y[0] = acc;\n";
      os << "  if (part != part_small) __builtin_free(part);\n";
      os << red_y_end() << copy_reduction();
      return os.str();
    }
    const int m = static_cast<int>(G.size());
    const ir::ReductionGroup& inner = G[m - 1];
    // The kept group split across threads: another than the leading one when
    // it gives enough tasks by its own size (which group splits is part of
    // the code), else the leading one (a batch), else the one giving the most.
    int P = -1;
    int64_t best = -1;
    for (int i = 1; i < m; ++i) {
      if (G[i].reduced) continue;
      int64_t tasks = i == m - 1 ? (G[i].size + kBlock - 1) / kBlock : G[i].size;
      if (tasks > best) best = tasks, P = i;
    }
    if (!G[0].reduced && (P < 0 || best < 16)) P = 0;
    const bool init = red_groups > 0;  // else every output is written once, from the identity
    if (init)
      os << maybe_parallel(red_count_expr(),
                           cat("  for (int64_t o = 0; o < ", red_count_expr(), "; ++o) y[o] = ", identity(), ";\n"));
    os << "  // groups (size, reduced):";
    for (int i = 0; i < m; ++i)
      os << " (" << gsize(static_cast<size_t>(i)) << ", " << (G[i].reduced ? "r" : "k") << ")";
    os << "; split group " << P << "\n";
    std::ostringstream loop;
    const bool split_inner = P == m - 1;
    std::string ind = "  ";
    if (split_inner) {
      loop << ind << "for (int64_t wb = 0; wb < (" << gsize(static_cast<size_t>(m - 1)) << " + " << kBlock - 1 << ") / "
           << kBlock << "; ++wb) {\n";
    } else {
      loop << ind << "for (int64_t i" << P << " = 0; i" << P << " < " << gsize(static_cast<size_t>(P)) << "; ++i" << P
           << ") {\n";
    }
    ind += "  ";
    if (!inner.reduced) loop << ind << "alignas(64) " << t << " red[" << temp_len() << "];\n";
    int open = 1;
    for (int i = 0; i < m - 1; ++i) {
      if (i == P) continue;
      loop << ind << "for (int64_t i" << i << " = 0; i" << i << " < " << gsize(static_cast<size_t>(i)) << "; ++i" << i
           << ") {\n";
      ind += "  ";
      ++open;
    }
    std::string base = "0", obase = "0";
    for (int i = 0; i < m - 1; ++i) {
      base = cat(base, " + i", num(i), " * ", sz(G[i].in_stride));
      if (!G[i].reduced) obase = cat(obase, " + i", num(i), " * ", sz(G[i].out_stride));
    }
    const std::string inner_size = gsize(static_cast<size_t>(m - 1));
    loop << ind << "const int64_t base = " << base << ", o = " << obase << ";\n";
    if (inner.reduced) {
      loop << ind << "y[o] = " << combine() << "(y[o], " << sym_ << "_run(c, base, base + " << inner_size << "));\n";
    } else {
      if (split_inner) {
        loop << ind << "{\n"
             << ind << "  const int64_t w0 = wb * " << kBlock << ", w1 = gcg_lo(" << inner_size << ", w0 + " << kBlock
             << ");\n";
      } else {
        loop << ind << "for (int64_t w0 = 0; w0 < " << inner_size << "; w0 += " << kBlock << ") {\n";
        loop << ind << "  const int64_t w1 = gcg_lo(" << inner_size << ", w0 + " << kBlock << ");\n";
      }
      loop << ind << "  " << sym_ << "_block(c, base + w0, base + w1, red);\n";
      loop << ind << "  " << t << "* yo = y + o + w0;\n";
      loop << "#pragma omp simd\n";
      loop << ind << "  for (int64_t w = 0; w < w1 - w0; ++w) yo[w] = " << combine() << "("
           << (init ? std::string("yo[w]") : identity()) << ", red[w]);\n";
      loop << ind << "}\n";
    }
    for (int i = 0; i < open; ++i) {
      ind.resize(ind.size() - 2);
      loop << ind << "}\n";
    }
    os << maybe_parallel("n", loop.str());
    os << red_y_end() << copy_reduction();
    return os.str();
  }

  // A float sum over [outer, reduced, inner] (the schedule refuses other
  // forms): rows in runs, or columns in sum_order::ColumnSums. The leading
  // group (outer, or reduced when there is no outer) is g0.
  std::string ordered_sum_driver() const {
    std::ostringstream os;
    const std::string t = RT();
    ir::OuterReducedInner f;
    if (!ir::outer_reduced_inner(groups(), &f)) fail("a float sum over axes that are not adjacent");
    const bool outer_leads = !groups().empty() && !groups()[0].reduced;
    const std::string outer = outer_leads ? "g0" : sz(f.outer), reduced = outer_leads ? sz(f.reduced) : "g0";
    os << red_y_begin();
    if (f.inner == 1 && f.outer == 1) {
      os << "  // full float sum: chunks (subtrees) combined as sum_order's tree\n" << chunk_parts();
      os << maybe_parallel("n", chunk_loop());
      os << "  graft::sum_order::Levels<" << t << "> lv;\n";
      os << "  for (int64_t ch = 0; ch + 1 < nch; ++ch) lv.push(part[ch]);\n";
      os << "  y[0] = lv.finish(part[nch - 1]);\n";
      os << "  if (part != part_small) __builtin_free(part);\n";
    } else if (f.inner == 1 && f.reduced <= kBlock) {
      // Short rows: a block holds kBlock / R whole rows, each one row block.
      os << "  // float row sums: rows of R, per of them in a block\n";
      os << "  const int64_t R = " << sz(f.reduced) << ", per = " << sz(kBlock / f.reduced) << ";\n";
      os << "  const int64_t chunks = (" << outer << " + per - 1) / per;\n";
      std::ostringstream loop;
      loop << "  for (int64_t q = 0; q < chunks; ++q) {\n";
      loop << "    const int64_t o0 = q * per, o1 = gcg_lo(" << outer << ", o0 + per);\n";
      loop << "    alignas(64) " << t << " red[" << temp_len() << "];\n";
      loop << "    " << sym_ << "_block(c, o0 * R, o1 * R, red);\n";
      loop << "    for (int64_t o = o0; o < o1; ++o) y[o] = gcg_short_row_sum<" << t << ">(red + (o - o0) * R, R);\n";
      loop << "  }\n";
      os << maybe_parallel("n", loop.str());
    } else if (f.inner == 1) {
      os << "  // float row sums: rows of " << reduced << "\n";
      os << maybe_parallel("n", cat("  for (int64_t o = 0; o < ", outer, "; ++o) y[o] = ", sym_, "_run(c, o * ",
                                    reduced, ", o * ", reduced, " + ", reduced, ");\n"));
    } else {
      // Columns in blocks of W = min(inner, kBlock). The storage's length is a literal that does not depend on
      // the sizes: kBlock columns of the levels of at most kMaxDim rows (the stack holds it, untouched past W).
      const int64_t W = std::min<int64_t>(f.inner, kBlock);
      const int64_t max_levels = sum_order::column_levels(ir::kMaxDim);
      os << "  // float column sums: " << outer << " x inner columns of " << reduced << " rows, in blocks of W\n";
      os << "  const int64_t levels = graft::sum_order::column_levels(" << reduced << ");\n";
      os << "  const int64_t inner = " << sz(f.inner) << ", W = " << sz(W) << ", wch = " << sz((f.inner + W - 1) / W)
         << ";\n";
      std::ostringstream loop;
      loop << "  for (int64_t it = 0; it < " << outer << " * wch; ++it) {\n";
      loop << "    const int64_t o = it / wch, w0 = (it % wch) * W, w1 = gcg_lo(inner, w0 + W);\n";
      loop << "    alignas(64) " << t << " red[" << temp_len() << "];\n";
      loop << "    alignas(64) " << t << " store[" << (max_levels + 1) * kBlock << "];\n";
      loop << "    graft::sum_order::ColumnSums<" << t << "> cs;\n";
      loop << "    cs.start(store, w1 - w0, levels);\n";
      loop << "    for (int64_t r = 0; r < " << reduced << "; ++r) {\n";
      loop << "      const int64_t b = (o * " << reduced << " + r) * inner;\n";
      loop << "      " << sym_ << "_block(c, b + w0, b + w1, red);\n";
      loop << "      cs.add(red, 1, 0);\n";
      loop << "    }\n";
      loop << "    cs.finish(y + o * inner + w0);\n";
      loop << "  }\n";
      // Few columns of many rows (batch norm's sums over N, H, W per channel): one column block per thread
      // would leave the others idle, so the rows are cut into pieces of kColumnPiece (a power of two times
      // sum_order's column block: subtrees), summed on threads, and the pieces' sums combined in order as
      // the tree's top levels: the same bits as one pass.
      const int64_t piece_levels = sum_order::column_levels(kColumnPiece);
      std::ostringstream pieces;
      pieces << "    for (int64_t it = 0; it < items; ++it) {\n";
      pieces << "      const int64_t ow = it / np, p = it % np, o = ow / wch, w0 = (ow % wch) * W,"
             << " w1 = gcg_lo(inner, w0 + W);\n";
      pieces << "      alignas(64) " << t << " red[" << temp_len() << "];\n";
      pieces << "      alignas(64) " << t << " store[" << (piece_levels + 1) * kBlock << "];\n";
      pieces << "      graft::sum_order::ColumnSums<" << t << "> cs;\n";
      pieces << "      cs.start(store, w1 - w0, " << piece_levels << ");\n";
      pieces << "      for (int64_t r = p * " << kColumnPiece << "; r < gcg_lo(" << reduced << ", (p + 1) * "
             << kColumnPiece << "); ++r) {\n";
      pieces << "        const int64_t b = (o * " << reduced << " + r) * inner;\n";
      pieces << "        " << sym_ << "_block(c, b + w0, b + w1, red);\n";
      pieces << "        cs.add(red, 1, 0);\n";
      pieces << "      }\n";
      pieces << "      cs.finish(part + it * W);\n";
      pieces << "    }\n";
      os << "  const int64_t np = (" << reduced << " + " << kColumnPiece - 1 << ") / " << kColumnPiece << ";\n";
      os << "  if (" << outer << " * wch < " << kFewColumnBlocks << " && np >= 4) {\n";
      os << "    const int64_t items = " << outer << " * wch * np;\n";
      os << "    " << t << "* part = static_cast<" << t << "*>(__builtin_malloc(items * W * sizeof(" << t << ")));\n";
      os << maybe_parallel("n", pieces.str());
      os << "    for (int64_t ow = 0; ow < " << outer << " * wch; ++ow) {\n";
      os << "      const int64_t o = ow / wch, w0 = (ow % wch) * W, w1 = gcg_lo(inner, w0 + W);\n";
      os << "      for (int64_t j = 0; j < w1 - w0; ++j) {\n";
      os << "        graft::sum_order::Levels<" << t << "> lv;\n";
      os << "        for (int64_t p = 0; p + 1 < np; ++p) lv.push(part[(ow * np + p) * W + j]);\n";
      os << "        y[o * inner + w0 + j] = lv.finish(part[(ow * np + np - 1) * W + j]);\n";
      os << "      }\n";
      os << "    }\n";
      os << "    __builtin_free(part);\n";
      os << "  } else {\n";
      os << maybe_parallel("n", loop.str());
      os << "  }\n";
    }
    os << red_y_end() << copy_reduction();
    return os.str();
  }

  const ir::Graph& g_;
  std::string sym_;
  Schedule p_;
  std::set<int> used_inputs_, used_uniforms_;
  std::set<size_t> used_outputs_;
  mutable std::vector<int64_t> sizes_;  // the kernel's sizes, z[0], z[1], ...
};

}  // namespace

KernelSource emit_kernel_source(const ir::Graph& body, const std::string& symbol) {
  check_symbol(symbol, "cpu codegen");
  return Emitter(body, symbol).run();
}

std::string emit_kernel(const ir::Graph& body, const std::string& symbol) {
  return emit_kernel_source(body, symbol).text;
}

std::vector<int64_t> kernel_scalars(const ir::Graph& body) {
  std::vector<int64_t> out = kernel_constants(body);
  const std::vector<int64_t> sizes = emit_kernel_source(body, "gcg_sizes").sizes;
  out.insert(out.end(), sizes.begin(), sizes.end());
  return out;
}

std::vector<int64_t> kernel_constants(const ir::Graph& body) {
  std::vector<int64_t> out;
  for (const Node& n : body.nodes()) {
    if (n.op != Op::constant) continue;
    const ir::Literal& lit = *ir::attr<ir::LiteralPtr>(n, "value");
    if (lit.bytes.size() != ir::dtype_size(lit.type.dtype))
      fail(cat("constant ", ir::type_str(lit.type), " is not a one-element kernel parameter"));
    int64_t v = 0;
    std::memcpy(&v, lit.bytes.data(), lit.bytes.size());
    out.push_back(v);
  }
  return out;
}

int64_t kernel_elements(const ir::Graph& body) { return schedule(body).N(); }

std::optional<std::string> unsupported_reason(const ir::Graph& body) {
  try {
    schedule(body);
  } catch (const UnsupportedError& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

}  // namespace graft::codegen::cpu
