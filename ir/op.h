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
  elementwise, reduce, shape, indexing, sort, creation, linalg, random, control, custom, collective, pmap, fusion
};
inline constexpr int kNumFamilies = 13;

enum class Op : uint16_t {
#define GRAFT_OP(ident, ...) ident,
#include "ir/ops.def"
#undef GRAFT_OP
};

// The number of primitives. A new line in ops.def must come with a new count
// here, so an op cannot be half-added without the reviewer noticing.
inline constexpr int kNumOps = 94;

inline constexpr int kVariadic = -1;

struct OpInfo {
  std::string_view name;
  int arity;  // kVariadic for a variable number of operands
  OpFamily family;
  bool linear;     // has a transpose rule (see ops.def)
  bool inplace;    // output may reuse a dying operand's buffer
  bool reduction;  // a tree reduction over `axes` (may end a fused kernel)
  std::string_view not_differentiable;  // empty, or why the op has no JVP rule
  bool side_effects;                    // false: DCE and CSE may drop or merge it
  std::string_view attributes;          // the schema, "name:kind ..." (ir/attr_schema.h)
};

namespace detail {
#define VARIADIC kVariadic
#define LINEAR true
#define NONLINEAR false
#define INPLACE true
#define NOT_INPLACE false
#define REDUCTION true
#define NO_REDUCTION false
#define DIFFERENTIABLE ""
#define PURE false
#define EFFECTFUL true
inline constexpr std::array<OpInfo, kNumOps> kOpTable = {{
#define GRAFT_OP(ident, name, arity, family, linear, inplace, reduction, differentiable, effects, attributes) \
  OpInfo{name, arity, OpFamily::family, linear, inplace, reduction, differentiable, effects, attributes},
#include "ir/ops.def"
#undef GRAFT_OP
}};
#undef VARIADIC
#undef LINEAR
#undef NONLINEAR
#undef INPLACE
#undef NOT_INPLACE
#undef REDUCTION
#undef NO_REDUCTION
#undef DIFFERENTIABLE
#undef PURE
#undef EFFECTFUL
}  // namespace detail

constexpr const OpInfo& op_info(Op op) { return detail::kOpTable[static_cast<size_t>(op)]; }

// Predicates over the table's columns: the only place op properties are asked.
constexpr bool is_elementwise(Op op) { return op_info(op).family == OpFamily::elementwise; }
constexpr bool is_reduction(Op op) { return op_info(op).reduction; }
constexpr bool is_collective(Op op) { return op_info(op).family == OpFamily::collective; }
constexpr bool is_linear(Op op) { return op_info(op).linear; }
constexpr bool is_differentiable(Op op) { return op_info(op).not_differentiable.empty(); }
constexpr bool has_side_effects(Op op) { return op_info(op).side_effects; }
// fusion nodes are made by jit after every transform has run.
constexpr bool is_jit_internal(Op op) { return op_info(op).family == OpFamily::fusion; }
constexpr std::string_view op_name(Op op) { return op_info(op).name; }

// The rules an op must have, derived from its columns. Every op has a shape
// rule and an interpreter kernel.
constexpr bool has_jvp_rule(Op op) { return is_differentiable(op); }
constexpr bool has_transpose_rule(Op op) { return is_linear(op); }
// Ops without operands (creation) compute nothing that varies along a mapped axis.
constexpr bool has_batch_rule(Op op) {
  return op_info(op).family != OpFamily::creation && !is_jit_internal(op);
}

std::optional<Op> op_from_name(std::string_view name);
const char* family_name(OpFamily family);

}  // namespace graft::ir
