// Index i of one axis of a row-major array, copied out or in: `outer` runs
// of `inner` bytes, strided by the axis's size. pmap splits its arguments
// and stacks its results this way, eagerly (api/sharded_array.cpp) and as a
// node (interpreter/kernels/pmap.cpp).
#pragma once

#include <cstdint>
#include <cstring>

#include "ir/dtype.h"
#include "ir/value.h"

namespace graft::interpreter {

struct AxisSlices {
  size_t outer = 1;  // elements before the axis
  size_t count = 1;  // the axis's size
  size_t inner = 1;  // bytes after it: one slice's contiguous run
};

inline AxisSlices axis_slices(const ir::ValueType& t, int64_t axis) {
  AxisSlices s;
  s.count = static_cast<size_t>(t.shape[static_cast<size_t>(axis)]);
  for (int64_t a = 0; a < axis; ++a) s.outer *= static_cast<size_t>(t.shape[static_cast<size_t>(a)]);
  for (size_t a = static_cast<size_t>(axis) + 1; a < t.shape.size(); ++a) s.inner *= static_cast<size_t>(t.shape[a]);
  s.inner *= ir::dtype_size(t.dtype);
  return s;
}

// part (outer * inner bytes) = index i of whole's axis.
inline void copy_slice_out(const void* whole, void* part, const AxisSlices& s, size_t i) {
  const auto* src = static_cast<const char*>(whole);
  auto* dst = static_cast<char*>(part);
  for (size_t o = 0; o < s.outer; ++o) std::memcpy(dst + o * s.inner, src + (o * s.count + i) * s.inner, s.inner);
}

// Index i of whole's axis = part.
inline void copy_slice_in(const void* part, void* whole, const AxisSlices& s, size_t i) {
  const auto* src = static_cast<const char*>(part);
  auto* dst = static_cast<char*>(whole);
  for (size_t o = 0; o < s.outer; ++o) std::memcpy(dst + (o * s.count + i) * s.inner, src + o * s.inner, s.inner);
}

}  // namespace graft::interpreter
