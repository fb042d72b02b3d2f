#include "ir/value.h"

#include <limits>

namespace graft::ir {

int64_t checked_num_elements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return -1;
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) return -1;
    n *= d;
  }
  return n;
}

int64_t ValueType::num_elements() const {
  int64_t n = checked_num_elements(shape);
  return n < 0 ? std::numeric_limits<int64_t>::max() : n;
}

std::string shape_str(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

std::string type_str(const ValueType& type) { return dtype_name(type.dtype) + shape_str(type.shape); }

std::string loc_str(const SourceLoc& loc) {
  if (loc.empty()) return "";
  return loc.file + ":" + std::to_string(loc.line);
}

}  // namespace graft::ir
