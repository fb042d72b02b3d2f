// Op: the enumeration generated from ops.def, and its static properties.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace graft::ir {

enum class OpFamily : uint8_t {
  elementwise, reduce, shape, indexing, sort, creation, linalg, random, control, custom, collective, fusion
};
inline constexpr int kNumFamilies = 12;

enum class Op : uint16_t {
#define GRAFT_OP(ident, name, arity, family, linear, inplace, reduction, differentiable) ident,
#include "ir/ops.def"
#undef GRAFT_OP
};

// The number of primitives. A new line in ops.def must come with a new count
// here, so an op cannot be half-added without the reviewer noticing.
inline constexpr int kNumOps = 92;

inline constexpr int kVariadic = -1;

struct OpInfo {
  std::string_view name;
  int arity;  // kVariadic for a variable number of operands
  OpFamily family;
  bool linear;     // has a transpose rule (see ops.def)
  bool inplace;    // output may reuse a dying operand's buffer
  bool reduction;  // a tree reduction over `axes` (may end a fused kernel)
  std::string_view not_differentiable;  // empty, or why the op has no JVP rule
};

const OpInfo& op_info(Op op);

// Predicates over the table's columns: the only place op properties are asked.
inline bool is_elementwise(Op op) { return op_info(op).family == OpFamily::elementwise; }
inline bool is_reduction(Op op) { return op_info(op).reduction; }
inline bool is_collective(Op op) { return op_info(op).family == OpFamily::collective; }
inline bool is_differentiable(Op op) { return op_info(op).not_differentiable.empty(); }
inline std::string_view op_name(Op op) { return op_info(op).name; }
std::optional<Op> op_from_name(std::string_view name);
const char* family_name(OpFamily family);

}  // namespace graft::ir
