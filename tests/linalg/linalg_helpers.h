// Helpers shared by the linalg tests: the largest entrywise difference of
// two arrays (in f64), and a batch of matrices transposed.
#pragma once

#include <catch2/catch.hpp>
#include <cmath>
#include <utility>
#include <vector>

#include "graft/graft.h"

namespace graft::test {

// max |a - b| over the entries (a and b of one size, any float dtype).
inline double max_abs_diff(const Array& a, const Array& b) {
  const std::vector<double> x = astype(a, DType::f64).to_vector<double>(),
                            y = astype(b, DType::f64).to_vector<double>();
  REQUIRE(x.size() == y.size());
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::fabs(x[i] - y[i]));
  return worst;
}

// a with its last two axes swapped.
inline Array mT(const Array& a) {
  std::vector<int> perm;
  for (size_t i = 0; i < a.shape().size(); ++i) perm.push_back(static_cast<int>(i));
  std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
  return transpose(a, perm);
}

}  // namespace graft::test
