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
#define GRAFT_OP(ident, name, arity, family, linear, inplace) ident,
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
  bool linear;   // has a transpose rule (see ops.def)
  bool inplace;  // output may reuse a dying operand's buffer
};

const OpInfo& op_info(Op op);
inline std::string_view op_name(Op op) { return op_info(op).name; }
std::optional<Op> op_from_name(std::string_view name);
const char* family_name(OpFamily family);

}  // namespace graft::ir
