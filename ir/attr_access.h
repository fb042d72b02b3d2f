// Checked reads of an op's attributes. A missing attribute, or one of another
// kind, is a GraphFormatError naming the op and the attribute, never a null
// dereference: graphs also arrive from JSON.
#pragma once

#include <string_view>
#include <variant>

#include "ir/attrs.h"
#include "ir/graph.h"
#include "ir/op.h"

namespace graft::ir {

// Throws the GraphFormatError for attribute `name` of `op`: missing (found
// null) or not of the kind `want` names.
[[noreturn]] void bad_attr(Op op, std::string_view name, const AttrValue* found, const char* want);

template <class T>
constexpr const char* attr_type_name() {
  if constexpr (std::is_same_v<T, int64_t>) return "an integer";
  else if constexpr (std::is_same_v<T, Ints>) return "a list of integers";
  else if constexpr (std::is_same_v<T, double>) return "a number";
  else if constexpr (std::is_same_v<T, DType>) return "a dtype";
  else if constexpr (std::is_same_v<T, std::string>) return "a string";
  else if constexpr (std::is_same_v<T, Graphs>) return "a list of graphs";
  else if constexpr (std::is_same_v<T, LiteralPtr>) return "a literal";
  else if constexpr (std::is_same_v<T, HostCallbackPtr>)
    return "a host callback";
  else return "another kind";
}

// Attribute `name` of an op `op` with attributes `attrs` (a kernel call's).
template <class T>
const T& attr(const Attrs& attrs, std::string_view name, Op op) {
  const AttrValue* v = attrs.find(std::string(name));
  if (v == nullptr || !std::holds_alternative<T>(*v)) bad_attr(op, name, v, attr_type_name<T>());
  return std::get<T>(*v);
}

// Attribute `name` of a node.
template <class T>
const T& attr(const Node& node, std::string_view name) {
  return attr<T>(node.attrs, name, node.op);
}

inline int64_t int_attr(const Node& node, std::string_view name) { return attr<int64_t>(node, name); }
inline const Ints& ints_attr(const Node& node, std::string_view name) { return attr<Ints>(node, name); }

}  // namespace graft::ir
