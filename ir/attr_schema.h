// The typed attribute schema of each op, parsed from ops.def's last column.
// Every node is checked against it when its types are inferred (every
// builder path, JSON import included): a missing, mistyped or unknown
// attribute is a GraphFormatError naming the op and the attribute.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "ir/attrs.h"
#include "ir/op.h"

namespace graft::ir {

struct AttrSpec {
  std::string_view name;
  AttrKind kind;
};

// The op's attributes, sorted by name (the order Attrs keeps).
std::span<const AttrSpec> attr_schema(Op op);

// Empty when `attrs` matches the schema of `op`; otherwise what is wrong with
// the first attribute that does not ("attribute 'axes' is missing (it must
// be ints)").
std::string attr_schema_violation(Op op, const Attrs& attrs);

// Throws GraphFormatError("<op>: <violation>") when attrs do not match.
void check_attr_schema(Op op, const Attrs& attrs);

}  // namespace graft::ir
