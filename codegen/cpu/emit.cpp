// The CPU code generator for fused elementwise kernels (see emit.h).
//
// Shape of an emitted kernel
// --------------------------
// Values of the body fall into three kinds:
//   uniform  one element: computed once per call, before any loop (inputs
//            of one element, constants, ops on uniforms);
//   view     a body input read through a broadcast / reshape (an element
//            index into the input buffer, strides baked into the source),
//            or a uniform broadcast to a bigger shape (a "splat");
//   full     computed per element of the iteration space [0, N).
//
// Full values are computed per block of kBlock elements. A block runs in
// stages: an inline stage is one `#pragma omp simd` loop computing a run of
// ops in registers; an op the interpreter computes with Eigen (math.h: exp,
// log, tanh, sqrt, ...) is a call stage, one call of graft's Eigen function
// on the whole block. Values that cross stages live in per-block arrays on
// the stack (t<N>[]); broadcast inputs that are not contiguous are gathered
// into per-block arrays (g<N>[]) once per block. The last stage is inline
// and stores every output (after all of the block's reads, so an output may
// alias an input).
//
// Eigen takes its packet path for elements whose SIMD packet (aligned in
// the destination) lies inside the range it is given, and its scalar path
// for the others; the interpreter's destinations are 64-byte aligned and its
// parallel chunks start at multiples of 2^14, so element i takes the packet
// path there unless i >= N - N % packet. A call stage reproduces that: its
// range is the block widened to multiples of 16 elements (clipped to N) in a
// 64-byte aligned array, so every element sits in the same packet as in the
// interpreter. Stages before the last call stage therefore run on the widened
// range [xlo, xhi); the widening elements are computed and discarded.
//
// A trailing reduction receives, per block, the values it reduces (`red`);
// the reduced input's axes, without size-1 axes and with neighbouring axes
// of one kind (kept / reduced) merged, form groups. With no kept group it is
// a full reduction: chunks of kSumChunk elements reduce in parallel and
// their results combine in chunk order. Otherwise one kept group is split
// across threads, and each output element receives its elements in the
// interpreter's order (row-major over the reduced axes), so results are
// exact except for "run sums": a float sum over a contiguous run of reduced
// elements adds element k of each kSumChunk chunk into lane k % 8, sums the
// 8 lanes left to right, and adds the chunks' sums in order (0 + c0 + c1 ...).
// Max and min run sequentially (associative, so exact), integers wrap.
#include "codegen/cpu/emit.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <functional>
#include <set>
#include <sstream>

#include "codegen/cpu/math.h"
#include "graft/errors.h"
#include "ir/dtype.h"

namespace graft::codegen::cpu {
namespace {

using ir::Node;
using ir::Op;
using ir::ValueId;
using ir::ValueType;

// Concatenation without `"literal" + std::string` chains.
template <class... A>
std::string cat(const A&... parts) {
  std::string out;
  ((out += parts), ...);
  return out;
}
std::string num(int64_t v) { return std::to_string(v); }

[[noreturn]] void fail(const std::string& why) { throw UnsupportedError(cat("cpu codegen: ", why)); }

const char* ctype(DType d) {
  switch (d) {
    case DType::bool_: return "bool";
    case DType::i32: return "int32_t";
    case DType::i64: return "int64_t";
    case DType::u32: return "uint32_t";
    case DType::f32: return "float";
    case DType::f64: return "double";
  }
  return "?";
}

// The type integer arithmetic wraps in (signed overflow is undefined in C++).
const char* wrap_type(DType d) {
  switch (d) {
    case DType::i32: return "uint32_t";
    case DType::i64: return "uint64_t";
    default: return ctype(d);
  }
}

std::vector<int64_t> row_major(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (int i = static_cast<int>(s.size()) - 2; i >= 0; --i) st[i] = st[i + 1] * s[i + 1];
  return st;
}

int64_t count_of(const Shape& s) {
  int64_t n = ir::checked_num_elements(s);
  if (n < 0) fail(cat("shape ", ir::shape_str(s), " has too many elements"));
  return n;
}

// ---- ops as C++ expressions (the interpreter's formulas)

// a: operand expressions; dt: the operands' dtype (select: the branches').
std::string op_expr(Op op, DType dt, DType out, const std::vector<std::string>& a) {
  const bool fl = ir::is_floating(dt);
  const std::string T = ctype(dt), U = wrap_type(dt);
  auto wrap2 = [&](const char* sym) { return cat("(", T, ")((", U, ")", a[0], " ", sym, " (", U, ")", a[1], ")"); };
  auto bad = [&]() -> std::string {
    fail(cat(std::string(ir::op_name(op)), " has no kernel for ", dtype_name(dt)));
  };
  switch (op) {
    case Op::neg: return fl ? cat("(-", a[0], ")") : cat("(", T, ")((", U, ")0 - (", U, ")", a[0], ")");
    case Op::abs:
      if (fl) return cat("gcg_fabs(", a[0], ")");
      if (dt == DType::i32 || dt == DType::i64)
        return cat("(", a[0], " < 0 ? (", T, ")((", U, ")0 - (", U, ")", a[0], ") : ", a[0], ")");
      return bad();
    case Op::sign:
      if (fl) return cat("(__builtin_isnan(", a[0], ") ? ", a[0], " : (", T, ")((", a[0], " > 0) - (", a[0], " < 0)))");
      if (dt == DType::bool_) return bad();
      return cat("(", T, ")((", a[0], " > 0) - (", a[0], " < 0))");
    case Op::square:
      if (dt == DType::bool_) return bad();
      return fl ? cat("(", a[0], " * ", a[0], ")") : cat("(", T, ")((", U, ")", a[0], " * (", U, ")", a[0], ")");
    case Op::reciprocal:
      if (dt == DType::bool_) return bad();
      return fl ? cat("((", T, ")1 / ", a[0], ")") : cat("gcg_int_div((", T, ")1, ", a[0], ")");
    case Op::erf: return fl ? cat("gcg_erf(", a[0], ")") : bad();
    case Op::is_finite: return fl ? cat("__builtin_isfinite(", a[0], ")") : std::string("true");
    case Op::not_:
      if (fl) return bad();
      return dt == DType::bool_ ? cat("(!", a[0], ")") : cat("(", T, ")(~", a[0], ")");
    case Op::stop_gradient:
    case Op::copy: return a[0];
    case Op::add:
    case Op::sub:
    case Op::mul: {
      if (dt == DType::bool_) return bad();
      const char* sym = op == Op::add ? "+" : op == Op::sub ? "-" : "*";
      return fl ? cat("(", a[0], " ", sym, " ", a[1], ")") : wrap2(sym);
    }
    case Op::div:
      if (dt == DType::bool_) return bad();
      return fl ? cat("(", a[0], " / ", a[1], ")") : cat("gcg_int_div(", a[0], ", ", a[1], ")");
    case Op::rem:
      if (dt == DType::bool_) return bad();
      return fl ? cat("gcg_fmod(", a[0], ", ", a[1], ")") : cat("gcg_int_rem(", a[0], ", ", a[1], ")");
    case Op::pow: return fl ? cat("gcg_pow(", a[0], ", ", a[1], ")") : bad();
    case Op::atan2: return fl ? cat("gcg_atan2(", a[0], ", ", a[1], ")") : bad();
    case Op::max:
    case Op::min:
      if (dt == DType::bool_) return bad();
      return cat(op == Op::max ? "gcg_max<" : "gcg_min<", T, ">(", a[0], ", ", a[1], ")");
    case Op::and_:
    case Op::or_:
    case Op::xor_: {
      if (fl) return bad();
      const char* sym = op == Op::and_ ? "&" : op == Op::or_ ? "|" : "^";
      return cat("(", T, ")(", a[0], " ", sym, " ", a[1], ")");
    }
    case Op::eq: return cat("(", a[0], " == ", a[1], ")");
    case Op::ne: return cat("(", a[0], " != ", a[1], ")");
    case Op::lt: return cat("(", a[0], " < ", a[1], ")");
    case Op::le: return cat("(", a[0], " <= ", a[1], ")");
    case Op::gt: return cat("(", a[0], " > ", a[1], ")");
    case Op::ge: return cat("(", a[0], " >= ", a[1], ")");
    case Op::select: return cat("(", a[0], " ? ", a[1], " : ", a[2], ")");
    case Op::convert_element_type: return cat("gcg_convert<", ctype(out), ", ", T, ">(", a[0], ")");
    default: break;
  }
  fail(cat(std::string(ir::op_name(op)), " cannot be emitted as an elementwise expression"));
}

bool is_reduction(Op op) { return op == Op::reduce_sum || op == Op::reduce_max || op == Op::reduce_min; }

// ---- analysis

enum class Kind { uniform, view, full };

struct Val {
  Kind kind = Kind::full;
  DType dtype = DType::f32;
  int64_t count = 0;
  int ord = -1;  // canonical number: names u<ord>, v<ord>, t<ord>, g<ord>
  // view: elements of body input `input` (or of uniform `splat`, when input < 0)
  int input = -1;
  int splat = -1;                // ord of the uniform a splat repeats
  Shape shape;                   // the value's shape
  std::vector<int64_t> strides;  // element strides into the input, per axis of `shape`
  // full
  int stage = -1;
  bool temp = false;    // kept in t<ord>[] for later stages
  bool gather = false;  // view gathered (or splat filled) into g<ord>[]
};

// Merged (size, stride) dims of a view: size-1 dims dropped, neighbours
// that step through the input as one dim merged.
void merged_dims(const Val& v, Shape* sizes, std::vector<int64_t>* strides) {
  for (size_t d = 0; d < v.shape.size(); ++d) {
    if (v.shape[d] == 1) continue;
    int64_t st = v.input < 0 ? 0 : v.strides[d];
    if (!sizes->empty() && strides->back() == st * v.shape[d]) {
      sizes->back() *= v.shape[d];
      strides->back() = st;
    } else {
      sizes->push_back(v.shape[d]);
      strides->push_back(st);
    }
  }
}

bool contiguous(const Val& v) {
  if (v.input < 0) return false;
  Shape s;
  std::vector<int64_t> st;
  merged_dims(v, &s, &st);
  return s.empty() || (s.size() == 1 && st[0] == 1);
}

struct Step {  // computes one value
  enum What { input, constant, op } what;
  int out = -1;   // slot
  int index = 0;  // input: buffer index; constant: scalar index
  const Node* node = nullptr;
  std::vector<int> in;  // op: operand slots
  std::optional<MathFn> math;
};

struct Stage {
  bool call = false;
  std::vector<size_t> steps;  // indices into Plan::fulls
};

enum class Store { full, uniform, copy, fill, reduction };
struct Output {
  size_t pos;
  int slot;
  Store how;
};

struct Group {  // merged axes of the reduced input
  int64_t size;
  bool reduced;
  int64_t in_stride = 0, out_stride = 0;
};

struct Plan {
  int64_t N = 0;
  std::vector<Val> vals;
  std::vector<int> slot;  // by ValueId
  std::vector<Step> uniforms, fulls;
  std::vector<Stage> stages;
  std::vector<Output> outputs;
  int num_scalars = 0;
  bool has_loop = false, has_calls = false;
  // the trailing reduction
  bool has_red = false;
  Op red_op = Op::reduce_sum;
  int red_in = -1;
  DType red_dtype = DType::f32;
  int64_t red_count = 0;  // output elements
  std::vector<Group> groups;
};

int new_val(Plan& p, ValueId id, Val v) {
  const int s = static_cast<int>(p.vals.size());
  v.ord = s;
  p.vals.push_back(std::move(v));
  p.slot[id] = s;
  return s;
}

std::string val_desc(const ir::Graph& g, ValueId id) { return ir::type_str(g.type(id)); }

Plan analyze(const ir::Graph& g) {
  Plan p;
  p.slot.assign(static_cast<size_t>(g.value_id_bound()), -1);
  const auto& nodes = g.nodes();
  size_t num_nodes = nodes.size();

  // A trailing reduction, when one of the outputs is its result.
  const Node* red = nullptr;
  if (!nodes.empty() && is_reduction(nodes.back().op)) {
    red = &nodes.back();
    --num_nodes;
    if (std::find(g.outputs().begin(), g.outputs().end(), red->outputs[0]) == g.outputs().end()) red = nullptr;
  }
  if (red) {
    p.N = count_of(g.type(red->inputs[0]).shape);
  } else {
    for (ValueId id : g.inputs()) p.N = std::max(p.N, count_of(g.type(id).shape));
    for (size_t i = 0; i < num_nodes; ++i)
      for (ValueId id : nodes[i].outputs) p.N = std::max(p.N, count_of(g.type(id).shape));
  }

  for (size_t j = 0; j < g.inputs().size(); ++j) {
    const ValueType& t = g.type(g.inputs()[j]);
    Val v;
    v.dtype = t.dtype;
    v.count = count_of(t.shape);
    if (v.count == 1) {
      v.kind = Kind::uniform;
      int s = new_val(p, g.inputs()[j], v);
      p.uniforms.push_back(Step{Step::input, s, static_cast<int>(j), nullptr, {}, std::nullopt});
    } else {
      v.kind = Kind::view;
      v.input = static_cast<int>(j);
      v.shape = t.shape;
      v.strides = row_major(t.shape);
      new_val(p, g.inputs()[j], v);
    }
  }

  for (size_t ni = 0; ni < num_nodes; ++ni) {
    const Node& node = nodes[ni];
    if (node.outputs.size() != 1) fail(cat(std::string(ir::op_name(node.op)), ": nodes with several outputs cannot be fused"));
    const ValueId out = node.outputs[0];
    const ValueType& ot = g.type(out);
    const int64_t ocount = count_of(ot.shape);
    std::vector<int> in;
    for (ValueId id : node.inputs) {
      if (id < 0 || id >= static_cast<ValueId>(p.slot.size()) || p.slot[id] < 0)
        throw GraphFormatError("cpu codegen: a node reads an undefined value");
      in.push_back(p.slot[id]);
    }
    if (node.op == Op::constant) {
      if (ocount != 1)
        fail(cat("constant ", ir::type_str(ot), " has ", num(ocount),
                 " elements; only one-element constants are kernel parameters (pass bigger ones as inputs)"));
      Val v;
      v.kind = Kind::uniform;
      v.dtype = ot.dtype;
      v.count = 1;
      int s = new_val(p, out, v);
      p.uniforms.push_back(Step{Step::constant, s, p.num_scalars++, &node, {}, std::nullopt});
      continue;
    }
    if (node.op == Op::reshape || node.op == Op::broadcast_in_dim) {
      const Val src = p.vals[in[0]];  // a copy: new_val may grow the table
      if (src.kind == Kind::uniform && ocount == 1) {
        p.slot[out] = in[0];
      } else if (src.kind == Kind::full) {
        if (ocount != src.count)
          fail(cat(std::string(ir::op_name(node.op)), " of a computed value to ", ir::type_str(ot),
                   ": only body inputs may be broadcast"));
        p.slot[out] = in[0];  // same elements, same order
      } else {
        Val v;
        v.kind = Kind::view;
        v.dtype = ot.dtype;
        v.count = ocount;
        v.shape = ot.shape;
        if (src.kind == Kind::uniform) {
          v.splat = src.ord;
          v.strides.assign(ot.shape.size(), 0);
        } else if (src.input < 0) {
          v.splat = src.splat;
          v.strides.assign(ot.shape.size(), 0);
        } else if (node.op == Op::reshape) {
          if (!contiguous(src)) fail("reshape of a broadcast input cannot be fused; broadcast the reshaped input instead");
          v.input = src.input;
          v.strides = row_major(ot.shape);
        } else {
          const auto* dims = node.attrs.find("broadcast_dimensions");
          if (!dims) throw GraphFormatError("cpu codegen: broadcast_in_dim without broadcast_dimensions");
          const ir::Ints& bd = std::get<ir::Ints>(*dims);
          v.input = src.input;
          v.strides.assign(ot.shape.size(), 0);
          for (size_t i = 0; i < bd.size(); ++i)
            if (src.shape[i] != 1) v.strides[bd[i]] = src.strides[i];
        }
        new_val(p, out, v);
      }
      continue;
    }
    if (ir::op_info(node.op).family != ir::OpFamily::elementwise) {
      if (is_reduction(node.op)) fail(cat(std::string(ir::op_name(node.op)), " must be the body's last node (and an output)"));
      fail(cat(std::string(ir::op_name(node.op)), " cannot be fused into a CPU kernel"));
    }
    // An elementwise op.
    const DType dt = g.type(node.inputs[node.op == Op::select ? 1 : 0]).dtype;
    const std::optional<MathFn> math = ir::is_floating(dt) ? math_fn_for(node.op) : std::nullopt;
    if (!math) op_expr(node.op, dt, ot.dtype, std::vector<std::string>(node.inputs.size(), "x"));  // throws when no kernel
    bool all_uniform = true;
    for (int s : in) all_uniform = all_uniform && p.vals[s].kind == Kind::uniform;
    Val v;
    v.dtype = ot.dtype;
    v.count = ocount;
    Step step{Step::op, -1, 0, &node, in, math};
    if (all_uniform && ocount == 1) {
      v.kind = Kind::uniform;
      step.out = new_val(p, out, v);
      p.uniforms.push_back(step);
      continue;
    }
    if (ocount != p.N)
      fail(cat(std::string(ir::op_name(node.op)), " computes ", ir::type_str(ot), ", not the iteration space's ", num(p.N),
               " elements"));
    for (size_t k = 0; k < in.size(); ++k) {
      const Val& o = p.vals[in[k]];
      if (o.kind == Kind::view && o.count != p.N)
        fail(cat(std::string(ir::op_name(node.op)), " reads ", val_desc(g, node.inputs[k]), " of ", num(o.count),
                 " elements; an input must be broadcast to the iteration space first"));
    }
    v.kind = Kind::full;
    step.out = new_val(p, out, v);
    p.fulls.push_back(step);
  }

  // Outputs.
  for (size_t pos = 0; pos < g.outputs().size(); ++pos) {
    ValueId id = g.outputs()[pos];
    if (red && id == red->outputs[0]) {
      p.outputs.push_back({pos, -1, Store::reduction});
      continue;
    }
    if (id < 0 || id >= static_cast<ValueId>(p.slot.size()) || p.slot[id] < 0)
      throw GraphFormatError("cpu codegen: an output is not a value of the body");
    int s = p.slot[id];
    const Val& v = p.vals[s];
    if (v.kind == Kind::uniform) {
      p.outputs.push_back({pos, s, Store::uniform});
    } else if (v.kind == Kind::full || v.count == p.N) {
      p.outputs.push_back({pos, s, Store::full});
    } else if (v.input < 0) {
      p.outputs.push_back({pos, s, Store::fill});
    } else if (contiguous(v)) {
      p.outputs.push_back({pos, s, Store::copy});
    } else {
      fail(cat("output ", num(static_cast<int64_t>(pos)), " is a broadcast input of ", num(v.count),
               " elements, not the iteration space's ", num(p.N)));
    }
  }

  if (red) {
    p.has_red = true;
    p.red_op = red->op;
    p.red_in = p.slot[red->inputs[0]];
    const ValueType& rt = g.type(red->inputs[0]);
    p.red_dtype = rt.dtype;
    if (p.red_op == Op::reduce_sum && p.red_dtype == DType::bool_) fail("reduce_sum of bool has no kernel");
    p.red_count = count_of(g.type(red->outputs[0]).shape);
    const auto* axes_attr = red->attrs.find("axes");
    if (!axes_attr) throw GraphFormatError("cpu codegen: reduction without axes");
    std::vector<bool> reduced(rt.shape.size(), false);
    for (int64_t a : std::get<ir::Ints>(*axes_attr)) {
      int64_t ax = a < 0 ? a + rt.rank() : a;
      if (ax < 0 || ax >= rt.rank()) throw GraphFormatError("cpu codegen: reduction axis out of range");
      reduced[ax] = true;
    }
    for (size_t d = 0; d < rt.shape.size(); ++d) {
      if (rt.shape[d] == 1) continue;
      if (!p.groups.empty() && p.groups.back().reduced == reduced[d]) p.groups.back().size *= rt.shape[d];
      else p.groups.push_back(Group{rt.shape[d], reduced[d]});
    }
    int64_t in_st = 1, out_st = 1;
    for (int i = static_cast<int>(p.groups.size()) - 1; i >= 0; --i) {
      p.groups[i].in_stride = in_st;
      in_st *= p.groups[i].size;
      if (!p.groups[i].reduced) {
        p.groups[i].out_stride = out_st;
        out_st *= p.groups[i].size;
      }
    }
    const Val& rv = p.vals[p.red_in];
    if (rv.kind == Kind::view && rv.count != p.N) fail("the reduction reads a broadcast input of the wrong size");
  }

  // Stages and what crosses them.
  bool any_full_output = false;
  for (const Output& o : p.outputs) any_full_output = any_full_output || o.how == Store::full;
  p.has_loop = p.N > 0 && (any_full_output || p.has_red);
  if (!p.has_loop) return p;
  for (size_t f = 0; f < p.fulls.size(); ++f) {
    if (p.fulls[f].math) {
      p.stages.push_back(Stage{true, {f}});
      p.has_calls = true;
    } else {
      if (p.stages.empty() || p.stages.back().call) p.stages.push_back(Stage{false, {}});
      p.stages.back().steps.push_back(f);
    }
    p.vals[p.fulls[f].out].stage = static_cast<int>(p.stages.size()) - 1;
  }
  if (p.stages.empty() || p.stages.back().call) p.stages.push_back(Stage{false, {}});
  const int final_stage = static_cast<int>(p.stages.size()) - 1;
  auto reads = [&](int s, int stage, bool call) {
    Val& v = p.vals[s];
    if (v.kind == Kind::full && v.stage != stage) v.temp = true;
    if (v.kind == Kind::view && (v.input < 0 ? call : !contiguous(v))) v.gather = true;
  };
  for (size_t si = 0; si < p.stages.size(); ++si)
    for (size_t f : p.stages[si].steps)
      for (int s : p.fulls[f].in) reads(s, static_cast<int>(si), p.stages[si].call);
  for (const Output& o : p.outputs)
    if (o.how == Store::full) reads(o.slot, final_stage, false);
  if (p.has_red) reads(p.red_in, final_stage, false);
  for (const Stage& st : p.stages)
    if (st.call) p.vals[p.fulls[st.steps[0]].out].temp = true;
  return p;
}

// ---- emission

const char* kPrelude = R"(#ifndef GRAFT_CG_PRELUDE
#define GRAFT_CG_PRELUDE 1
// Kernels generated by graft's CPU code generator (codegen/cpu/emit.cpp).
// Only <cstdint>: the math is GCC/Clang builtins (what libstdc++'s std::
// functions call), which keeps a small module's compile time down.
#include <cstdint>

#define GCG_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

typedef void (*gcg_f32_fn)(const float*, float*, int64_t);
typedef void (*gcg_f64_fn)(const double*, double*, int64_t);
struct gcg_math_table {
  int32_t version;
  int32_t count;
  const gcg_f32_fn* f32;
  const gcg_f64_fn* f64;
};
const gcg_f32_fn* gcg_f32 = nullptr;
const gcg_f64_fn* gcg_f64 = nullptr;

inline void gcg_call(int fn, const float* x, float* y, int64_t n) { gcg_f32[fn](x, y, n); }
inline void gcg_call(int fn, const double* x, double* y, int64_t n) { gcg_f64[fn](x, y, n); }

inline int64_t gcg_lo(int64_t a, int64_t b) { return a < b ? a : b; }

template <class T>
inline T gcg_bits(int64_t v) {
  T t;
  __builtin_memcpy(&t, &v, sizeof(T));
  return t;
}

// Type facts (no <type_traits>, no <limits>).
template <class T>
struct gcg_t {
  static constexpr bool fl = false;
};
template <>
struct gcg_t<float> {
  static constexpr bool fl = true;
};
template <>
struct gcg_t<double> {
  static constexpr bool fl = true;
};
template <>
struct gcg_t<int32_t> {
  static constexpr bool fl = false;
  static constexpr int32_t lo = INT32_MIN, hi = INT32_MAX;
};
template <>
struct gcg_t<int64_t> {
  static constexpr bool fl = false;
  static constexpr int64_t lo = INT64_MIN, hi = INT64_MAX;
};
template <>
struct gcg_t<uint32_t> {
  static constexpr bool fl = false;
  static constexpr uint32_t lo = 0, hi = UINT32_MAX;
};
template <class A, class B>
struct gcg_same {
  static constexpr bool value = false;
};
template <class A>
struct gcg_same<A, A> {
  static constexpr bool value = true;
};

inline float gcg_fabs(float x) { return __builtin_fabsf(x); }
inline double gcg_fabs(double x) { return __builtin_fabs(x); }
inline float gcg_erf(float x) { return __builtin_erff(x); }
inline double gcg_erf(double x) { return __builtin_erf(x); }
inline float gcg_fmod(float x, float y) { return __builtin_fmodf(x, y); }
inline double gcg_fmod(double x, double y) { return __builtin_fmod(x, y); }
inline float gcg_pow(float x, float y) { return __builtin_powf(x, y); }
inline double gcg_pow(double x, double y) { return __builtin_pow(x, y); }
inline float gcg_atan2(float x, float y) { return __builtin_atan2f(x, y); }
inline double gcg_atan2(double x, double y) { return __builtin_atan2(x, y); }

// Integer division as XLA: x / 0 = -1, x % 0 = x, INT_MIN / -1 = INT_MIN.
inline int32_t gcg_int_div(int32_t a, int32_t b) { return b == 0 ? -1 : (a == INT32_MIN && b == -1) ? a : a / b; }
inline int64_t gcg_int_div(int64_t a, int64_t b) { return b == 0 ? -1 : (a == INT64_MIN && b == -1) ? a : a / b; }
inline uint32_t gcg_int_div(uint32_t a, uint32_t b) { return b == 0 ? UINT32_MAX : a / b; }
inline int32_t gcg_int_rem(int32_t a, int32_t b) { return b == 0 ? a : (a == INT32_MIN && b == -1) ? 0 : a % b; }
inline int64_t gcg_int_rem(int64_t a, int64_t b) { return b == 0 ? a : (a == INT64_MIN && b == -1) ? 0 : a % b; }
inline uint32_t gcg_int_rem(uint32_t a, uint32_t b) { return b == 0 ? a : a % b; }

// max and min propagate NaN.
template <class T>
inline T gcg_max(T a, T b) {
  if constexpr (gcg_t<T>::fl)
    if (__builtin_isnan(a) || __builtin_isnan(b)) return a + b;
  return a > b ? a : b;
}
template <class T>
inline T gcg_min(T a, T b) {
  if constexpr (gcg_t<T>::fl)
    if (__builtin_isnan(a) || __builtin_isnan(b)) return a + b;
  return a < b ? a : b;
}

// Float to integer conversion saturates and maps NaN to 0.
template <class To, class From>
inline To gcg_convert(From v) {
  if constexpr (gcg_same<To, bool>::value) {
    return v != From(0);
  } else if constexpr (gcg_t<From>::fl && !gcg_t<To>::fl) {
    if (__builtin_isnan(v)) return 0;
    if (v <= static_cast<From>(gcg_t<To>::lo)) return gcg_t<To>::lo;
    if (v >= static_cast<From>(gcg_t<To>::hi)) return gcg_t<To>::hi;
    return static_cast<To>(v);
  } else {
    return static_cast<To>(v);
  }
}

// Reduction steps: acc (+) v. Signed sums wrap.
inline float gcg_sum(float a, float b) { return a + b; }
inline double gcg_sum(double a, double b) { return a + b; }
inline int32_t gcg_sum(int32_t a, int32_t b) { return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b)); }
inline int64_t gcg_sum(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); }
inline uint32_t gcg_sum(uint32_t a, uint32_t b) { return a + b; }
template <class T>
inline T gcg_rmax(T acc, T v) {
  if constexpr (gcg_t<T>::fl) {
    if (__builtin_isnan(v) || v > acc) return __builtin_isnan(acc) ? acc : v;
    return acc;
  } else {
    return v > acc ? v : acc;
  }
}
template <class T>
inline T gcg_rmin(T acc, T v) {
  if constexpr (gcg_t<T>::fl) {
    if (__builtin_isnan(v) || v < acc) return __builtin_isnan(acc) ? acc : v;
    return acc;
  } else {
    return v < acc ? v : acc;
  }
}

// dst[k] = src[offset of element lo + k of a row-major `size` view whose
// axes step `stride` elements through src], k < len.
template <class T>
void gcg_gather(const T* src, T* dst, int64_t lo, int64_t len, int rank, const int64_t* size, const int64_t* stride) {
  int64_t idx[64];
  int64_t off = 0, rest = lo;
  for (int d = rank - 1; d >= 0; --d) {
    idx[d] = rest % size[d];
    rest /= size[d];
    off += idx[d] * stride[d];
  }
  const int64_t inner = size[rank - 1], step = stride[rank - 1];
  for (int64_t k = 0; k < len;) {
    const int64_t cnt = gcg_lo(inner - idx[rank - 1], len - k);
    const T* p = src + off;
    if (step == 0) {
      for (int64_t j = 0; j < cnt; ++j) dst[k + j] = p[0];
    } else if (step == 1) {
      for (int64_t j = 0; j < cnt; ++j) dst[k + j] = p[j];
    } else {
      for (int64_t j = 0; j < cnt; ++j) dst[k + j] = p[j * step];
    }
    k += cnt;
    off += cnt * step;
    idx[rank - 1] += cnt;
    if (idx[rank - 1] < inner) continue;
    off -= inner * step;
    idx[rank - 1] = 0;
    for (int d = rank - 2; d >= 0; --d) {
      off += stride[d];
      if (++idx[d] < size[d]) break;
      off -= stride[d] * size[d];
      idx[d] = 0;
    }
  }
}

template <class T>
void gcg_fill(T* dst, T v, int64_t len) {
  for (int64_t k = 0; k < len; ++k) dst[k] = v;
}

// A 64-byte aligned heap block (for block arrays too big for the stack).
inline char* gcg_align64(char* p) {
  return reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(p) + 63) & ~static_cast<uintptr_t>(63));
}

}  // namespace

// Called once after loading: the float functions of codegen/cpu/math.h.
GCG_EXPORT int graft_cpu_module_init(const void* table) {
  const gcg_math_table* t = static_cast<const gcg_math_table*>(table);
  if (t->version != GCG_MATH_VERSION || t->count != GCG_MATH_COUNT) return 1;
  gcg_f32 = t->f32;
  gcg_f64 = t->f64;
  return 0;
}
#endif  // GRAFT_CG_PRELUDE
)";

class Emitter {
 public:
  Emitter(const ir::Graph& g, const std::string& sym) : g_(g), sym_(sym), p_(analyze(g)) {}

  std::string run() {
    std::ostringstream os;
    std::string prelude = kPrelude;
    replace(prelude, "GCG_MATH_VERSION", num(kMathTableVersion));
    replace(prelude, "GCG_MATH_COUNT", num(static_cast<int64_t>(MathFn::count)));
    os << prelude << "\n// ---- kernel " << sym_ << ": N = " << p_.N << "\n";
    os << "namespace {\n";
    if (p_.has_loop) {
      std::string block = block_fn();  // collects what the context must carry
      os << ctx_struct() << gather_tables() << block;
      if (p_.has_red) os << run_fn();
    }
    os << "}  // namespace\n\n";
    os << entry_fn();
    return os.str();
  }

 private:
  static void replace(std::string& s, const std::string& from, const std::string& to) {
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  }

  const Val& val(int s) const { return p_.vals[s]; }
  std::string T(int s) const { return ctype(val(s).dtype); }
  std::string u(int ord) { return cat("u", num(ord)); }
  std::string RT() const { return ctype(p_.red_dtype); }
  int64_t temp_len() const { return kBlock + 32; }
  static constexpr int64_t kMaxStackBytes = 256 << 10;

  // The element k of value s inside stage `stage` of a block.
  std::string read(int s, int stage) {
    const Val& v = val(s);
    switch (v.kind) {
      case Kind::uniform:
        used_uniforms_.insert(v.ord);
        return u(v.ord);
      case Kind::view:
        if (v.input < 0) {
          used_uniforms_.insert(v.splat);
          return u(v.splat);
        }
        if (!v.gather) {
          used_inputs_.insert(v.input);
          return cat("in", num(v.input), "[xlo + k]");
        }
        return cat("g", num(v.ord), "[k]");
      case Kind::full: return v.stage == stage ? cat("v", num(v.ord)) : cat("t", num(v.ord), "[k]");
    }
    return "";
  }
  // Pointer to the block's elements of value s (a call stage's operand).
  std::string ptr(int s) {
    const Val& v = val(s);
    if (v.kind == Kind::full) return cat("t", num(v.ord));
    if (v.gather) return cat("g", num(v.ord));
    used_inputs_.insert(v.input);
    return cat("in", num(v.input), " + xlo");
  }

  std::string expr(const Step& st, const std::function<std::string(int)>& operand) {
    std::vector<std::string> a;
    for (int s : st.in) a.push_back(operand(s));
    const ir::Graph& g = g_;
    const Node& n = *st.node;
    DType dt = g.type(n.inputs[n.op == Op::select ? 1 : 0]).dtype;
    return op_expr(n.op, dt, val(st.out).dtype, a);
  }

  std::string block_fn() {
    std::ostringstream body;
    const int final_stage = static_cast<int>(p_.stages.size()) - 1;
    // Gathers and fills, over the (widened) block.
    for (const Val& v : p_.vals) {
      if (!v.gather) continue;
      if (v.input < 0) {
        used_uniforms_.insert(v.splat);
        body << "  gcg_fill<" << ctype(v.dtype) << ">(g" << v.ord << ", " << u(v.splat) << ", len);\n";
      } else {
        used_inputs_.insert(v.input);
        Shape sizes;
        std::vector<int64_t> strides;
        merged_dims(v, &sizes, &strides);
        body << "  gcg_gather<" << ctype(v.dtype) << ">(in" << v.input << ", g" << v.ord << ", xlo, len, "
             << sizes.size() << ", " << sym_ << "_g" << v.ord << "_size, " << sym_ << "_g" << v.ord << "_stride);\n";
        gathers_.push_back({v.ord, sizes, strides});
      }
    }
    for (size_t si = 0; si < p_.stages.size(); ++si) {
      const Stage& st = p_.stages[si];
      const int stage = static_cast<int>(si);
      if (st.call) {
        const Step& s = p_.fulls[st.steps[0]];
        body << "  gcg_call(" << static_cast<int>(*s.math) << ", " << ptr(s.in[0]) << ", t" << val(s.out).ord
             << ", len);  // " << ir::op_name(s.node->op) << "\n";
        continue;
      }
      const bool last = stage == final_stage;
      body << "#pragma omp simd\n";
      body << (last ? "  for (int64_t k = s; k < e; ++k) {\n" : "  for (int64_t k = 0; k < len; ++k) {\n");
      for (size_t f : st.steps) {
        const Step& s = p_.fulls[f];
        const Val& v = val(s.out);
        body << "    const " << ctype(v.dtype) << " v" << v.ord << " = "
             << expr(s, [&](int o) { return read(o, stage); }) << ";  // " << ir::op_name(s.node->op) << "\n";
        if (v.temp) body << "    t" << v.ord << "[k] = v" << v.ord << ";\n";
      }
      if (last) {
        // Every read before any write: outputs may alias inputs.
        std::vector<std::string> stores;
        int n = 0;
        for (const Output& o : p_.outputs) {
          if (o.how != Store::full) continue;
          body << "    const " << T(o.slot) << " s" << n << " = " << read(o.slot, stage) << ";\n";
          used_outputs_.insert(o.pos);
          stores.push_back(cat("    out", num(static_cast<int64_t>(o.pos)), "[xlo + k] = s", num(n), ";\n"));
          ++n;
        }
        if (p_.has_red) {
          body << "    const " << RT() << " s" << n << " = " << read(p_.red_in, stage) << ";\n";
          stores.push_back(cat("    red[k - s] = s", num(n), ";\n"));
        }
        for (const std::string& line : stores) body << line;
      }
      body << "  }\n";
    }

    std::ostringstream os;
    os << "// Computes elements [lo, hi): stores the outputs" << (p_.has_red ? " and the values to reduce (red[0, hi - lo))" : "")
       << ".\n";
    os << "inline void " << sym_ << "_block(const " << sym_ << "_ctx& c, int64_t lo, int64_t hi, "
       << (p_.has_red ? RT() : std::string("void")) << "* red) {\n";
    if (!p_.has_red) os << "  (void)red;\n";
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
    for (const Val& v : p_.vals) {
      if (v.kind == Kind::full && v.temp) arrays.push_back({cat("t", num(v.ord)), v.dtype});
      if (v.gather) arrays.push_back({cat("g", num(v.ord)), v.dtype});
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
    os << "struct " << sym_ << "_ctx {\n  const void* const* in;\n  void* const* out;\n  int64_t lim;\n";
    for (int ord : used_uniforms_) os << "  " << ctype(val(ord).dtype) << " " << u(ord) << ";\n";
    os << "};\n\n";
    return os.str();
  }

  std::string gather_tables() {
    std::ostringstream os;
    for (const auto& gt : gathers_) {
      os << "const int64_t " << sym_ << "_g" << gt.ord << "_size[] = {";
      for (size_t i = 0; i < gt.sizes.size(); ++i) os << (i ? ", " : "") << gt.sizes[i];
      os << "};\nconst int64_t " << sym_ << "_g" << gt.ord << "_stride[] = {";
      for (size_t i = 0; i < gt.strides.size(); ++i) os << (i ? ", " : "") << gt.strides[i];
      os << "};\n";
    }
    if (!gathers_.empty()) os << "\n";
    return os.str();
  }

  std::string identity() const {
    const std::string t = RT();
    switch (p_.red_dtype) {
      case DType::bool_: return p_.red_op == Op::reduce_min ? "true" : "false";
      case DType::f32: return p_.red_op == Op::reduce_sum ? "0.0f" : p_.red_op == Op::reduce_max ? "-__builtin_inff()" : "__builtin_inff()";
      case DType::f64: return p_.red_op == Op::reduce_sum ? "0.0" : p_.red_op == Op::reduce_max ? "-__builtin_inf()" : "__builtin_inf()";
      default:
        if (p_.red_op == Op::reduce_sum) return cat("(", t, ")0");
        return cat("gcg_t<", t, ">::", p_.red_op == Op::reduce_max ? "lo" : "hi");
    }
  }
  std::string combine() const {
    if (p_.red_op == Op::reduce_sum) return "gcg_sum";
    return cat(p_.red_op == Op::reduce_max ? "gcg_rmax<" : "gcg_rmin<", RT(), ">");
  }

  // <sym>_run(c, lo, hi): the reduction of the contiguous elements [lo, hi).
  std::string run_fn() {
    std::ostringstream os;
    const std::string t = RT();
    os << "// Reduces the contiguous elements [lo, hi).\n";
    os << t << " " << sym_ << "_run(const " << sym_ << "_ctx& c, int64_t lo, int64_t hi) {\n";
    os << "  alignas(64) " << t << " red[" << temp_len() << "];\n";
    if (p_.red_op == Op::reduce_sum) {
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
    // Uniform values, in node order.
    for (const Step& st : p_.uniforms) {
      const Val& v = val(st.out);
      const std::string t = ctype(v.dtype);
      switch (st.what) {
        case Step::input:
          os << "  const " << t << " " << u(v.ord) << " = static_cast<const " << t << "*>(in[" << st.index << "])[0];\n";
          break;
        case Step::constant:
          os << "  const " << t << " " << u(v.ord) << " = gcg_bits<" << t << ">(sc[" << st.index << "]);\n";
          break;
        case Step::op:
          if (st.math) {
            os << "  " << t << " " << u(v.ord) << ";\n";
            os << "  gcg_call(" << static_cast<int>(*st.math) << ", &" << u(val(st.in[0]).ord) << ", &" << u(v.ord)
               << ", 1);  // " << ir::op_name(st.node->op) << "\n";
          } else {
            os << "  const " << t << " " << u(v.ord) << " = " << expr(st, [&](int o) { return u(val(o).ord); })
               << ";  // " << ir::op_name(st.node->op) << "\n";
          }
          break;
      }
    }
    for (const Output& o : p_.outputs) {
      const Val& v = o.slot >= 0 ? val(o.slot) : Val{};
      const std::string t = o.slot >= 0 ? ctype(v.dtype) : "";
      const std::string dst = cat("out[", num(static_cast<int64_t>(o.pos)), "]");
      switch (o.how) {
        case Store::uniform: os << "  *static_cast<" << t << "*>(" << dst << ") = " << u(v.ord) << ";\n"; break;
        case Store::fill: os << "  gcg_fill<" << t << ">(static_cast<" << t << "*>(" << dst << "), " << u(v.splat) << ", " << v.count << ");\n"; break;
        case Store::copy:
          os << "  if (" << dst << " != in[" << v.input << "]) __builtin_memcpy(" << dst << ", in[" << v.input << "], "
             << v.count * static_cast<int64_t>(ir::dtype_size(v.dtype)) << ");\n";
          break;
        default: break;
      }
    }
    if (p_.has_red && !p_.has_loop) {  // nothing to reduce: N == 0
      os << "  {\n    " << RT() << "* y = static_cast<" << RT() << "*>(out[" << red_positions()[0] << "]);\n";
      os << "    for (int64_t o = 0; o < " << p_.red_count << "; ++o) y[o] = " << identity() << ";\n  }\n";
      os << copy_reduction();
    }
    if (p_.has_loop) {
      os << "  " << sym_ << "_ctx c;\n  c.in = in;\n  c.out = out;\n  c.lim = " << (p_.has_red ? num(p_.N) : std::string("n"))
         << ";\n";
      for (int ord : used_uniforms_) os << "  c." << u(ord) << " = " << u(ord) << ";\n";
      if (p_.has_red) os << reduce_driver();
      else os << elementwise_driver();
    }
    os << "}\n";
    return os.str();
  }

  std::vector<size_t> red_positions() const {
    std::vector<size_t> r;
    for (const Output& o : p_.outputs)
      if (o.how == Store::reduction) r.push_back(o.pos);
    return r;
  }

  std::string copy_reduction() const {
    std::vector<size_t> r = red_positions();
    std::ostringstream os;
    for (size_t i = 1; i < r.size(); ++i)
      os << "  __builtin_memcpy(out[" << r[i] << "], out[" << r[0] << "], "
         << p_.red_count * static_cast<int64_t>(ir::dtype_size(p_.red_dtype)) << ");\n";
    return os.str();
  }

  std::string elementwise_driver() const {
    std::ostringstream os;
    os << "  if (n <= 0) return;\n";
    os << "  const int64_t nb = (n + " << kBlock - 1 << ") / " << kBlock << ";\n";
    os << "#pragma omp parallel for schedule(static) if (n >= " << kParallelMin << ")\n";
    os << "  for (int64_t b = 0; b < nb; ++b) " << sym_ << "_block(c, b * " << kBlock << ", gcg_lo(n, b * " << kBlock
       << " + " << kBlock << "), nullptr);\n";
    return os.str();
  }

  std::string reduce_driver() const {
    std::ostringstream os;
    const std::string t = RT();
    const auto& G = p_.groups;
    const int64_t N = p_.N;
    os << "  " << t << "* y = static_cast<" << t << "*>(out[" << red_positions()[0] << "]);\n";
    int kept_groups = 0, red_groups = 0;
    for (const Group& gr : G) (gr.reduced ? red_groups : kept_groups)++;
    if (kept_groups == 0) {
      // A full reduction: chunks in parallel, combined in chunk order.
      const int64_t nch = (N + kSumChunk - 1) / kSumChunk;
      os << "  // full reduction of " << N << " elements: " << nch << " chunks combined in order\n";
      if (nch <= 64) os << "  " << t << " part[" << nch << "];\n";
      else os << "  " << t << "* part = static_cast<" << t << "*>(__builtin_malloc(" << nch << " * sizeof(" << t << ")));\n";
      if (N >= kParallelMin) os << "#pragma omp parallel for schedule(static)\n";
      os << "  for (int64_t ch = 0; ch < " << nch << "; ++ch) part[ch] = " << sym_ << "_run(c, ch * " << kSumChunk
         << ", gcg_lo(" << N << ", ch * " << kSumChunk << " + " << kSumChunk << "));\n";
      os << "  " << t << " acc = " << identity() << ";\n";
      os << "  for (int64_t ch = 0; ch < " << nch << "; ++ch) acc = " << combine() << "(acc, part[ch]);\n";
      os << "  y[0] = acc;\n";
      if (nch > 64) os << "  __builtin_free(part);\n";
      os << copy_reduction();
      return os.str();
    }
    const int m = static_cast<int>(G.size());
    const Group& inner = G[m - 1];
    // The kept group split across threads: the one giving the most tasks.
    int P = -1;
    int64_t best = -1;
    for (int i = 0; i < m; ++i) {
      if (G[i].reduced) continue;
      int64_t tasks = i == m - 1 ? (G[i].size + kBlock - 1) / kBlock : G[i].size;
      if (tasks > best) best = tasks, P = i;
    }
    const bool init = red_groups > 0;  // else every output is written once, from the identity
    if (init) {
      if (p_.red_count >= kParallelMin) os << "#pragma omp parallel for schedule(static)\n";
      os << "  for (int64_t o = 0; o < " << p_.red_count << "; ++o) y[o] = " << identity() << ";\n";
    }
    os << "  // groups (size, reduced):";
    for (const Group& gr : G) os << " (" << gr.size << ", " << (gr.reduced ? "r" : "k") << ")";
    os << "; split group " << P << "\n";
    if (N >= kParallelMin) os << "#pragma omp parallel for schedule(static)\n";
    const bool split_inner = P == m - 1;
    std::string ind = "  ";
    if (split_inner) {
      os << ind << "for (int64_t wb = 0; wb < " << (inner.size + kBlock - 1) / kBlock << "; ++wb) {\n";
    } else {
      os << ind << "for (int64_t i" << P << " = 0; i" << P << " < " << G[P].size << "; ++i" << P << ") {\n";
    }
    ind += "  ";
    if (!inner.reduced) os << ind << "alignas(64) " << t << " red[" << temp_len() << "];\n";
    int open = 1;
    for (int i = 0; i < m - 1; ++i) {
      if (i == P) continue;
      os << ind << "for (int64_t i" << i << " = 0; i" << i << " < " << G[i].size << "; ++i" << i << ") {\n";
      ind += "  ";
      ++open;
    }
    std::string base = "0", obase = "0";
    for (int i = 0; i < m - 1; ++i) {
      base = cat(base, " + i", num(i), " * ", num(G[i].in_stride));
      if (!G[i].reduced) obase = cat(obase, " + i", num(i), " * ", num(G[i].out_stride));
    }
    os << ind << "const int64_t base = " << base << ", o = " << obase << ";\n";
    if (inner.reduced) {
      os << ind << "y[o] = " << combine() << "(y[o], " << sym_ << "_run(c, base, base + " << inner.size << "));\n";
    } else {
      if (split_inner) {
        os << ind << "{\n" << ind << "  const int64_t w0 = wb * " << kBlock << ", w1 = gcg_lo(" << inner.size
           << ", w0 + " << kBlock << ");\n";
      } else {
        os << ind << "for (int64_t w0 = 0; w0 < " << inner.size << "; w0 += " << kBlock << ") {\n";
        os << ind << "  const int64_t w1 = gcg_lo(" << inner.size << ", w0 + " << kBlock << ");\n";
      }
      os << ind << "  " << sym_ << "_block(c, base + w0, base + w1, red);\n";
      os << ind << "  " << t << "* yo = y + o + w0;\n";
      os << "#pragma omp simd\n";
      os << ind << "  for (int64_t w = 0; w < w1 - w0; ++w) yo[w] = " << combine() << "("
         << (init ? std::string("yo[w]") : identity()) << ", red[w]);\n";
      os << ind << "}\n";
    }
    for (int i = 0; i < open; ++i) {
      ind.resize(ind.size() - 2);
      os << ind << "}\n";
    }
    os << copy_reduction();
    return os.str();
  }

  struct GatherTable {
    int ord;
    Shape sizes;
    std::vector<int64_t> strides;
  };

  const ir::Graph& g_;
  std::string sym_;
  Plan p_;
  std::set<int> used_inputs_, used_uniforms_;
  std::set<size_t> used_outputs_;
  std::vector<GatherTable> gathers_;
};

void check_symbol(const std::string& s) {
  bool ok = !s.empty() && !std::isdigit(static_cast<unsigned char>(s[0]));
  for (char ch : s) ok = ok && (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_');
  if (!ok) throw Error(cat("cpu codegen: '", s, "' is not a C identifier"));
}

}  // namespace

std::string emit_kernel(const ir::Graph& body, const std::string& symbol) {
  check_symbol(symbol);
  return Emitter(body, symbol).run();
}

std::vector<int64_t> kernel_scalars(const ir::Graph& body) {
  std::vector<int64_t> out;
  for (const Node& n : body.nodes()) {
    if (n.op != Op::constant) continue;
    const auto* attr = n.attrs.find("value");
    if (!attr) throw GraphFormatError("cpu codegen: constant without a value");
    const ir::Literal& lit = *std::get<ir::LiteralPtr>(*attr);
    if (lit.bytes.size() != ir::dtype_size(lit.type.dtype))
      fail(cat("constant ", ir::type_str(lit.type), " is not a one-element kernel parameter"));
    int64_t v = 0;
    std::memcpy(&v, lit.bytes.data(), lit.bytes.size());
    out.push_back(v);
  }
  return out;
}

int64_t kernel_elements(const ir::Graph& body) { return analyze(body).N; }

std::optional<std::string> unsupported_reason(const ir::Graph& body) {
  try {
    analyze(body);
  } catch (const UnsupportedError& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

}  // namespace graft::codegen::cpu
