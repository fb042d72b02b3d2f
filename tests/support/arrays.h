// Small helpers the tests share: an array's values as doubles, a normal
// random array from graft's own generator, a graph run through jit, and an
// elementwise closeness check.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "graft/graft.h"

namespace graft::test {

// Same shape, and every element within tol (absolute or relative).
inline void check_close(const Array& got, const Array& want, double tol = 1e-5) {
  REQUIRE(got.shape() == want.shape());
  std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i) {
    INFO("element " << i);
    CHECK(g[i] == Approx(w[i]).margin(tol).epsilon(tol));
  }
}

inline std::vector<double> values(const Array& a) { return astype(a, f64).to_vector<double>(); }

inline Array randn(Shape shape, uint64_t seed) { return random::normal(random::key(seed), std::move(shape)); }

// A graph compiled by jit for `backend` (waiting for generated code) and run once.
inline std::vector<Array> run_jit(const Graph& g, const std::vector<Array>& inputs, Backend backend) {
  const JitOptions options{.backend = backend, .wait_for_compile = true};
  const std::vector<bool> donated(inputs.size(), false);
  auto exe = detail::compile_graph(g, options, donated);
  return detail::run_executable(*exe, inputs, donated, options);
}

}  // namespace graft::test
