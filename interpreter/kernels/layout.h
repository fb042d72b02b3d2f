// Index arithmetic shared by kernels that move elements between layouts.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/value.h"

namespace graft::interpreter {

// Row-major element strides of a shape. A shape with a 0-size axis may have
// others whose product overflows (f32[0, 2^62, 4] holds nothing, and is
// valid); its strides are never used to reach an element, so they wrap
// instead of overflowing (undefined behaviour; ops fuzzer finding).
inline std::vector<int64_t> row_major_strides(const Shape& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i)
    s[i] = static_cast<int64_t>(static_cast<uint64_t>(s[i + 1]) * static_cast<uint64_t>(shape[i + 1]));
  return s;
}

// The axes of `shape` read with `strides`, without size-1 axes and with
// neighbours that step through memory as one axis merged (so a walk over
// them runs fewer, longer rows).
inline void merge_axes(const Shape& shape, const std::vector<int64_t>& strides, Shape* merged,
                       std::vector<int64_t>* merged_strides) {
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1) continue;
    // Wrapping, as row_major_strides: an empty array's other axes may multiply past int64.
    const int64_t span = static_cast<int64_t>(static_cast<uint64_t>(strides[i]) * static_cast<uint64_t>(shape[i]));
    if (!merged->empty() && merged_strides->back() == span) {
      merged->back() *= shape[i];
      merged_strides->back() = strides[i];
    } else {
      merged->push_back(shape[i]);
      merged_strides->push_back(strides[i]);
    }
  }
}

// Walks the indices of `shape` in row-major order while keeping a linear
// offset into another array whose per-axis strides are `strides`.
class StridedWalk {
 public:
  StridedWalk(const Shape& shape, std::vector<int64_t> strides, int64_t base = 0)
      : shape_(shape), strides_(std::move(strides)), index_(shape.size(), 0), offset_(base) {}

  // Positions the walk at row-major position `linear` of `shape`.
  void seek(int64_t linear, int64_t base = 0) {
    offset_ = base;
    for (int i = static_cast<int>(shape_.size()) - 1; i >= 0; --i) {
      int64_t d = shape_[i] ? shape_[i] : 1;
      index_[i] = linear % d;
      linear /= d;
      offset_ += index_[i] * strides_[i];
    }
  }
  int64_t offset() const { return offset_; }
  void next() {
    for (int i = static_cast<int>(shape_.size()) - 1; i >= 0; --i) {
      offset_ += strides_[i];
      if (++index_[i] < shape_[i]) return;
      offset_ -= strides_[i] * shape_[i];
      index_[i] = 0;
    }
  }

 private:
  Shape shape_;
  std::vector<int64_t> strides_;
  std::vector<int64_t> index_;
  int64_t offset_;
};

}  // namespace graft::interpreter
