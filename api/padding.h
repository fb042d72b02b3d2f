// String paddings resolved to {low, high} pairs, as JAX's padtype_to_pads:
// shared by the convolutions and the windowed reductions.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>

#include "graft/conv.h"

namespace graft::detail {

// The {low, high} padding of one dimension of `in` elements under a window
// spanning `window` elements (dilation included) at `stride`: none for
// "VALID"; for "SAME" and "SAME_LOWER" enough for ceil(in / stride)
// outputs, an odd one at the end ("SAME") or the start ("SAME_LOWER").
inline std::pair<int64_t, int64_t> string_padding(const Padding& padding, int64_t in, int64_t window, int64_t stride) {
  if (padding.name == "VALID" || stride < 1) return {0, 0};
  const int64_t out = (in + stride - 1) / stride;
  const int64_t total = std::max<int64_t>(0, (out - 1) * stride + window - in);
  const int64_t lo = padding.name == "SAME" ? total / 2 : total - total / 2;
  return {lo, total - lo};
}

}  // namespace graft::detail
