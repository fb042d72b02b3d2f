// Typed node attributes: int, int list, float, dtype, string, subgraphs and
// literal arrays (the payload of `constant`) and host functions (callbacks). Kept sorted by name so that
// printing, hashing and comparison are deterministic.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "ir/host_callback.h"
#include "ir/value.h"

namespace graft::ir {

class Graph;
using GraphPtr = std::shared_ptr<const Graph>;

// A constant array: its type and its bytes, little-endian, row-major.
struct Literal {
  ValueType type;
  std::vector<uint8_t> bytes;
  bool operator==(const Literal&) const = default;
};
using LiteralPtr = std::shared_ptr<const Literal>;

using Ints = std::vector<int64_t>;
using Graphs = std::vector<GraphPtr>;

// The order of alternatives is the attribute's kind, used in JSON and hashing.
using AttrValue = std::variant<int64_t, Ints, double, DType, std::string, Graphs, LiteralPtr, HostCallbackPtr>;
enum class AttrKind { int_, ints, float_, dtype, string, graphs, literal, callback };
const char* attr_kind_name(AttrKind kind);  // "int", "ints", "float", ...
inline AttrKind attr_kind(const AttrValue& v) { return static_cast<AttrKind>(v.index()); }

// Subgraphs structurally, floats bitwise, callbacks by identity (each traced
// call is its own callback), or by name and types when neither has a
// function (both read from JSON).
bool attr_equal(const AttrValue& a, const AttrValue& b);
size_t attr_hash(const AttrValue& v);

class Attrs {
 public:
  Attrs() = default;
  Attrs(std::initializer_list<std::pair<std::string, AttrValue>> init);

  void set(const std::string& name, AttrValue value);
  const AttrValue* find(const std::string& name) const;
  bool has(const std::string& name) const { return find(name) != nullptr; }

  const std::vector<std::pair<std::string, AttrValue>>& items() const { return items_; }
  bool empty() const { return items_.empty(); }
  size_t size() const { return items_.size(); }

  bool operator==(const Attrs& other) const;
  size_t hash() const;

 private:
  std::vector<std::pair<std::string, AttrValue>> items_;  // sorted by name
};

}  // namespace graft::ir
