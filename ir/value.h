// Abstract values: what the graph knows about an array before it exists.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "graft/types.h"

namespace graft::ir {

using ValueId = int32_t;

// Dimensions above this are rejected wherever a shape enters graft from
// outside (JSON, user shapes), so a hostile number cannot drive an allocation.
inline constexpr int64_t kMaxDim = int64_t{1} << 40;
inline constexpr int kMaxRank = 64;
// Element counts above this are refused like an overflow, so that a count
// times any dtype's size (at most 8 bytes) fits int64 and size_t: no byte
// count anywhere can wrap around to a small allocation.
inline constexpr int64_t kMaxElements = int64_t{1} << 60;

struct ValueType {
  DType dtype = DType::f32;
  Shape shape;

  int rank() const { return static_cast<int>(shape.size()); }
  int64_t num_elements() const;  // saturates at kMaxElements rather than overflow
  size_t num_bytes() const;      // num_elements() times the dtype's size
  bool operator==(const ValueType&) const = default;
};

std::string shape_str(const Shape& shape);      // "[3,4]"
std::string type_str(const ValueType& type);    // "f32[3,4]"

// Element count of a shape, or -1 when it exceeds kMaxElements (or a dim is negative).
int64_t checked_num_elements(const Shape& shape);

// Where a node came from in the user's program. File and function names
// are interned (one copy per process, never freed), so copying a node's
// location, which every graph pass does, allocates nothing.
class SourceLoc {
 public:
  SourceLoc() = default;
  SourceLoc(std::string_view file, std::string_view function, int line);

  std::string_view file;
  std::string_view function;
  int line = 0;

  bool empty() const { return file.empty() && line == 0; }
  bool operator==(const SourceLoc&) const = default;
};
// The process's one copy of s (safe to keep for the life of the process).
std::string_view intern_string(std::string_view s);
std::string loc_str(const SourceLoc& loc);  // "file.cpp:12", or "" when unknown

}  // namespace graft::ir
