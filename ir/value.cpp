#include "ir/value.h"

#include "ir/dtype.h"

#include <mutex>
#include <string>
#include <unordered_set>

#include <limits>

namespace graft::ir {

int64_t checked_num_elements(const Shape& shape) {
  // A 0-size axis empties the array whatever the others are (as NumPy): the
  // answer must not depend on whether the product overflowed before the 0.
  bool empty = false;
  for (int64_t d : shape) {
    if (d < 0) return -1;
    empty = empty || d == 0;
  }
  if (empty) return 0;
  int64_t n = 1;
  for (int64_t d : shape)  // no division: this runs for every op's result
    if (__builtin_mul_overflow(n, d, &n) || n > kMaxElements) return -1;
  return n;
}

size_t ValueType::num_bytes() const { return static_cast<size_t>(num_elements()) * dtype_size(dtype); }

int64_t ValueType::num_elements() const {
  int64_t n = checked_num_elements(shape);
  return n < 0 ? kMaxElements : n;
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
  return std::string(loc.file) + ":" + std::to_string(loc.line);
}

std::string_view intern_string(std::string_view s) {
  if (s.empty()) return {};
  // Traced ops come in runs from one function: a per-thread memo of the last
  // few strings skips the lock (a compare of a few dozen bytes).
  thread_local std::string_view recent[4];
  thread_local int next = 0;
  for (const std::string_view& r : recent)
    if (r == s) return r;
  static std::mutex mutex;
  static std::unordered_set<std::string> pool;  // node-based: elements never move
  std::string_view kept;
  {
    std::lock_guard lock(mutex);
    kept = *pool.emplace(s).first;
  }
  recent[next] = kept;
  next = (next + 1) % 4;
  return kept;
}

SourceLoc::SourceLoc(std::string_view file, std::string_view function, int line)
    : file(intern_string(file)), function(intern_string(function)), line(line) {}

}  // namespace graft::ir
