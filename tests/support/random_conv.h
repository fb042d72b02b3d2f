// A random convolution for the tests that compare two paths of
// conv_general_dilated (oneDNN's and graft's kernels): 1 to 3 spatial
// dimensions in shuffled layouts, strides, pads from -1 to 2 (so crops), lhs
// and rhs dilation, 1 to 3 feature groups, at least one output position.
#pragma once

#include <algorithm>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "graft/graft.h"

namespace graft::test {

struct RandomConv {
  ConvDimensionNumbers dn;
  std::string spatial;  // the spatial axes' letters, outermost first
  int64_t groups = 1, in_per_group = 1, out_per_group = 1, batch = 1, taps = 1;
  Shape in, window, strides, lhs_dilation, rhs_dilation;
  std::vector<std::pair<int64_t, int64_t>> pads;

  // The shape of an operand laid out by `spec`: its N or O axis `first`, its C or I axis `second`,
  // its spatial axes `sizes`.
  Shape shaped(const std::string& spec, int64_t first, int64_t second, const Shape& sizes) const {
    Shape s;
    for (char c : spec) {
      const size_t at = spatial.find(c);
      s.push_back(at != std::string::npos ? sizes[at] : (c == 'N' || c == 'O') ? first : second);
    }
    return s;
  }
  Shape lhs_shape() const { return shaped(dn.lhs, batch, groups * in_per_group, in); }
  Shape rhs_shape() const { return shaped(dn.rhs, groups * out_per_group, in_per_group, window); }
  Array apply(const Array& x, const Array& w) const {
    return conv_general_dilated(x, w, strides, Padding(pads), lhs_dilation, rhs_dilation, dn, groups);
  }
};

inline RandomConv random_conv(std::mt19937& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto shuffled = [&](std::string s) {
    std::shuffle(s.begin(), s.end(), rng);
    return s;
  };
  RandomConv c;
  const int n = pick(1, 3);
  c.spatial = std::string("DHW").substr(static_cast<size_t>(3 - n));
  c.dn = ConvDimensionNumbers{shuffled("NC" + c.spatial), shuffled("OI" + c.spatial), shuffled("NC" + c.spatial)};
  c.groups = pick(1, 3), c.in_per_group = pick(8, 32), c.out_per_group = pick(8, 32), c.batch = pick(1, 4);
  c.in.resize(static_cast<size_t>(n)), c.window.resize(static_cast<size_t>(n));
  for (int d = 0; d < n; ++d) {
    c.in[d] = pick(n == 3 ? 4 : 6, n == 3 ? 8 : n == 2 ? 14 : 40), c.window[d] = pick(1, 3);
    c.strides.push_back(pick(1, 2)), c.lhs_dilation.push_back(pick(1, 4) == 4 ? 2 : 1);
    c.rhs_dilation.push_back(pick(1, 3) == 3 ? 2 : 1);
    c.pads.emplace_back(pick(-1, 2), pick(-1, 2));
    // The output has at least one position (else draw the pads again).
    while ((c.lhs_dilation[d] * (c.in[d] - 1) + 1 + c.pads[d].first + c.pads[d].second -
            c.rhs_dilation[d] * (c.window[d] - 1) - 1) < 0)
      c.pads[d] = {pick(0, 2), pick(0, 2)};
    c.taps *= c.window[d];
  }
  return c;
}

}  // namespace graft::test
