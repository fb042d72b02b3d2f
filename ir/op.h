// Op: the enumeration generated from ops.def, and its static properties.
// The table is constexpr so that rule registries can ask, at compile time,
// which rules an op must have (see ops.def).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace graft::ir {

enum class OpFamily : uint8_t {
  elementwise,
  reduce,
  shape,
  indexing,
  sort,
  creation,
  linalg,
  random,
  control,
  custom,
  collective,
  pmap,
  fusion,
  fft,
  conv,
  window,
  callback
};
inline constexpr int kNumFamilies = 17;

enum class Op : uint16_t {
#define GRAFT_OP(ident, ...) ident,
#include "ir/ops.def"
#undef GRAFT_OP
};

// The number of primitives, counted from ops.def.
inline constexpr int kNumOps = 0
#define GRAFT_OP(...) +1
#include "ir/ops.def"
#undef GRAFT_OP
    ;

inline constexpr int kVariadic = -1;

// The `dtypes` column: which operand dtypes the op accepts (checked by the
// standard shape rules; an op's own shape rule may read it too).
// FLOATS: real floats; INEXACT: and complex; NUMBERS: every real number
// type; ALL_NUMBERS: and complex; SIGNED: signed ints, floats and complex;
// INTS; INTS_OR_BOOL; COMPLEX; REAL: any but complex (ordered types);
// LAPACK: f32, f64, c64, c128 (LAPACK's types); ANY.
enum class DTypeClass : uint8_t {
  floats,
  inexact,
  numbers,
  all_numbers,
  signed_numbers,
  ints,
  ints_or_bool,
  complex,
  real,
  lapack,
  any
};

// The `shape` column: the op's own rule (<ident>_shape) or a standard one.
enum class ShapeRuleKind : uint8_t {
  own,
  same_type,     // operands of one shape and dtype; the result has their type
  bool_result,   // operands of one shape and dtype; the result is bool of that shape
  reduces_axes,  // removes the `axes` (reductions)
  reduces_axis,  // removes `axis`, result of `index_dtype` (arg-reductions)
  scans_axis,    // keeps the operand's type, scanning `axis` (cumulative ops)
};

// The `jvp` column: the op's own rule, a derivative formula, linearity, or
// none (with the reason its derivative is zero or undefined).
enum class JvpKind : uint8_t {
  own,         // <ident>_jvp in ops/<family>.cpp
  derivative,  // unary: tangent * formula, the formula in x (operand) and y (result)
  linear_in,   // the op itself applied to the listed operands' tangents
  none,        // no derivative: text says why
};
struct JvpSpec {
  JvpKind kind;
  std::string_view text;  // the formula, the operand list ("0 2", "all"), or the reason
};

// The `batch` column: the op's own batching rule or a standard one.
enum class BatchRuleKind : uint8_t {
  own,
  elementwise,  // every operand at the first batched operand's batch axis
  over_axes,    // `axes` renumbered past the batch axis
  over_axis,    // `axis` renumbered past the batch axis
  none,         // no operands to batch (creation ops, jit's fusion)
};

// The `kernel` column: the interpreter kernel of the op.
enum class KernelKind : uint8_t {
  own,          // <ident>_kernel in interpreter/kernels/<family>.cpp
  scalar,       // elementwise: a loop over gcg_<ident> (interpreter/kernels/scalar_ops.h)
  vector_math,  // elementwise: floats through the float math table, other dtypes as scalar
};

// The `codegen` column: how the generated backends run the op.
enum class CodegenKind : uint8_t {
  emitted,        // the CPU and CUDA emitters write its code, fused with its neighbours
  strided_copy,   // cuda: a strided-copy kernel
  op_kernel,      // cuda: a kernel of its own (codegen/cuda/op_kernels.h)
  device_bodies,  // cuda: its subgraphs' kernels, stepped from the host
  cublas,         // cuda: cuBLAS
  cusolver,       // cuda: cuSOLVER or cuBLAS's trsm, with kernels of its own (codegen/cuda/linalg.h)
  cufft,          // cuda: cuFFT, with a scaling kernel of its own (codegen/cuda/fft.h)
  upload,         // cuda: copied to the device once
  host,           // cuda: runs on the host, for the reason given
};
struct CodegenSpec {
  CodegenKind kind;
  std::string_view host_reason;  // host: why
};

struct OpInfo {
  std::string_view ident;  // the C++ identifier: Op::<ident>, gcg_<ident>, <ident>_shape
  std::string_view name;
  int arity;  // kVariadic for a variable number of operands
  OpFamily family;
  DTypeClass dtypes;
  ShapeRuleKind shape_rule;
  JvpSpec jvp;
  bool linear;     // has a transpose rule (see ops.def)
  BatchRuleKind batch_rule;
  KernelKind kernel;
  CodegenSpec codegen;
  bool inplace;    // output may reuse a dying operand's buffer
  bool reduction;  // a tree reduction over `axes` (may end a fused kernel)
  std::string_view not_differentiable;  // empty, or why the op has no JVP rule
  bool side_effects;                    // false: DCE and CSE may drop or merge it
  std::string_view attributes;          // the schema, "name:kind ..." (ir/attr_schema.h)
};

namespace detail {
// OWN in any rule column: the op's own <ident>_<kind> function.
struct OwnRule {
  constexpr operator ShapeRuleKind() const { return ShapeRuleKind::own; }
  constexpr operator JvpSpec() const { return {JvpKind::own, {}}; }
  constexpr operator BatchRuleKind() const { return BatchRuleKind::own; }
  constexpr operator KernelKind() const { return KernelKind::own; }
};
constexpr JvpSpec jvp_spec(JvpKind kind, std::string_view text) { return {kind, text}; }
constexpr CodegenSpec codegen_spec(CodegenKind kind, std::string_view host_reason = {}) { return {kind, host_reason}; }
constexpr std::string_view no_jvp_reason(JvpSpec s) { return s.kind == JvpKind::none ? s.text : std::string_view{}; }

#define VARIADIC kVariadic
#define FLOATS DTypeClass::floats
#define INEXACT DTypeClass::inexact
#define NUMBERS DTypeClass::numbers
#define ALL_NUMBERS DTypeClass::all_numbers
#define COMPLEX DTypeClass::complex
#define REAL DTypeClass::real
#define SIGNED DTypeClass::signed_numbers
#define INTS DTypeClass::ints
#define INTS_OR_BOOL DTypeClass::ints_or_bool
#define ANY DTypeClass::any
#define LAPACK DTypeClass::lapack
#define OWN OwnRule()
#define SAME_TYPE ShapeRuleKind::same_type
#define BOOL_RESULT ShapeRuleKind::bool_result
#define REDUCES_AXES ShapeRuleKind::reduces_axes
#define REDUCES_AXIS ShapeRuleKind::reduces_axis
#define SCANS_AXIS ShapeRuleKind::scans_axis
#define DERIVATIVE(formula) jvp_spec(JvpKind::derivative, formula)
#define LINEAR_IN(operands) jvp_spec(JvpKind::linear_in, operands)
#define NO_JVP(why) jvp_spec(JvpKind::none, why)
#define BATCH_ELEMENTWISE BatchRuleKind::elementwise
#define BATCH_AXES BatchRuleKind::over_axes
#define BATCH_AXIS BatchRuleKind::over_axis
#define NO_BATCH BatchRuleKind::none
#define SCALAR KernelKind::scalar
#define VECTOR_MATH KernelKind::vector_math
#define EMITTED codegen_spec(CodegenKind::emitted)
#define STRIDED_COPY codegen_spec(CodegenKind::strided_copy)
#define OP_KERNEL codegen_spec(CodegenKind::op_kernel)
#define DEVICE_BODIES codegen_spec(CodegenKind::device_bodies)
#define CUBLAS codegen_spec(CodegenKind::cublas)
#define CUSOLVER codegen_spec(CodegenKind::cusolver)
#define CUFFT codegen_spec(CodegenKind::cufft)
#define UPLOAD codegen_spec(CodegenKind::upload)
#define HOST(why) codegen_spec(CodegenKind::host, why)
#define LINEAR true
#define NONLINEAR false
#define INPLACE true
#define NOT_INPLACE false
#define REDUCTION true
#define NO_REDUCTION false
#define PURE false
#define EFFECTFUL true
inline constexpr std::array<OpInfo, kNumOps> kOpTable = {{
#define GRAFT_OP(ident, name, arity, family, dtypes, shape, jvp, linear, batch, kernel, codegen, inplace, reduction, \
                 effects, attributes)                                                                                \
  OpInfo{#ident,  name,    arity,     OpFamily::family,   dtypes,  shape,     jvp, linear, batch, kernel,            \
         codegen, inplace, reduction, no_jvp_reason(jvp), effects, attributes},
#include "ir/ops.def"
#undef GRAFT_OP
}};
#undef VARIADIC
#undef FLOATS
#undef NUMBERS
#undef SIGNED
#undef INTS
#undef INTS_OR_BOOL
#undef ANY
#undef LAPACK
#undef OWN
#undef SAME_TYPE
#undef BOOL_RESULT
#undef REDUCES_AXES
#undef REDUCES_AXIS
#undef SCANS_AXIS
#undef DERIVATIVE
#undef LINEAR_IN
#undef NO_JVP
#undef BATCH_ELEMENTWISE
#undef BATCH_AXES
#undef BATCH_AXIS
#undef NO_BATCH
#undef SCALAR
#undef VECTOR_MATH
#undef EMITTED
#undef STRIDED_COPY
#undef OP_KERNEL
#undef DEVICE_BODIES
#undef CUBLAS
#undef CUSOLVER
#undef CUFFT
#undef UPLOAD
#undef HOST
#undef LINEAR
#undef NONLINEAR
#undef INPLACE
#undef NOT_INPLACE
#undef REDUCTION
#undef NO_REDUCTION
#undef PURE
#undef EFFECTFUL
}  // namespace detail

constexpr const OpInfo& op_info(Op op) { return detail::kOpTable[static_cast<size_t>(op)]; }

// Predicates over the table's columns: the only place op properties are asked.
constexpr bool is_elementwise(Op op) { return op_info(op).family == OpFamily::elementwise; }
constexpr bool is_reduction(Op op) { return op_info(op).reduction; }
constexpr bool is_collective(Op op) { return op_info(op).family == OpFamily::collective; }
constexpr bool is_linear(Op op) { return op_info(op).linear; }
constexpr bool is_differentiable(Op op) { return op_info(op).jvp.kind != JvpKind::none; }
constexpr bool has_side_effects(Op op) { return op_info(op).side_effects; }
// fusion nodes are made by jit after every transform has run.
constexpr bool is_jit_internal(Op op) { return op_info(op).family == OpFamily::fusion; }
constexpr std::string_view op_name(Op op) { return op_info(op).name; }
// How the generated backends run the op (the `codegen` column).
constexpr CodegenKind codegen_kind(Op op) { return op_info(op).codegen.kind; }

// The rules an op must have, derived from its columns. Every op has a shape
// rule and an interpreter kernel.
constexpr bool has_jvp_rule(Op op) { return is_differentiable(op); }
constexpr bool has_transpose_rule(Op op) { return is_linear(op); }
// Ops without operands (creation) compute nothing that varies along a mapped axis.
constexpr bool has_batch_rule(Op op) { return op_info(op).batch_rule != BatchRuleKind::none; }

std::optional<Op> op_from_name(std::string_view name);
const char* family_name(OpFamily family);

}  // namespace graft::ir
