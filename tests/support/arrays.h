// Small helpers the tests share: an array's values as doubles, and a normal
// random array from graft's own generator.
#pragma once

#include <cstdint>
#include <vector>

#include "graft/graft.h"

namespace graft::test {

inline std::vector<double> values(const Array& a) { return astype(a, f64).to_vector<double>(); }

inline Array randn(Shape shape, uint64_t seed) { return random::normal(random::key(seed), std::move(shape)); }

}  // namespace graft::test
