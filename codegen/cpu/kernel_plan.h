// The analysis of a fused kernel body for the CPU code generator: which
// values are uniform, views or full, how full values group into stages, and
// the trailing reduction's geometry (see emit.cpp for the kernel's shape).
// Internal to codegen/cpu: emit.cpp turns a Plan into C++,
// elementwise.cpp holds each op's C++ expression.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "codegen/cpu/math.h"
#include "graft/errors.h"
#include "ir/dtype.h"
#include "ir/graph.h"

namespace graft::codegen::cpu::detail {

using ir::Node;
using ir::Op;
using ir::ValueId;
using ir::ValueType;

// Concatenation without `"literal" + std::string` chains.
template <class... A>
inline std::string cat(const A&... parts) {
  std::string out;
  ((out += parts), ...);
  return out;
}
inline std::string num(int64_t v) { return std::to_string(v); }

[[noreturn]] inline void fail(const std::string& why) { throw UnsupportedError(cat("cpu codegen: ", why)); }

inline const char* ctype(DType d) {
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
inline const char* wrap_type(DType d) {
  switch (d) {
    case DType::i32: return "uint32_t";
    case DType::i64: return "uint64_t";
    default: return ctype(d);
  }
}

inline std::vector<int64_t> row_major(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (int i = static_cast<int>(s.size()) - 2; i >= 0; --i) st[i] = st[i + 1] * s[i + 1];
  return st;
}

inline int64_t count_of(const Shape& s) {
  int64_t n = ir::checked_num_elements(s);
  if (n < 0) fail(cat("shape ", ir::shape_str(s), " has too many elements"));
  return n;
}

// The C++ expression of an elementwise op over operand expressions `a`
// (elementwise.cpp); throws UnsupportedError for an op it cannot emit.
std::string op_expr(Op op, DType dt, DType out, const std::vector<std::string>& a);

// The reductions (ops.def) the C++ emitter can end a kernel with: a backend's
// capability, not an op fact; a body ending in another is refused and runs
// on the interpreter.
inline bool emits_reduction(Op op) {
  return ir::is_reduction(op) && (op == Op::reduce_sum || op == Op::reduce_max || op == Op::reduce_min);
}

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
inline void merged_dims(const Val& v, Shape* sizes, std::vector<int64_t>* strides) {
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

inline bool contiguous(const Val& v) {
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

// The plan of `g`; throws UnsupportedError when g is not an emittable body.
Plan analyze(const ir::Graph& g);

}  // namespace graft::codegen::cpu::detail
