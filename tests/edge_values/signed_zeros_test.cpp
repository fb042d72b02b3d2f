// max and min order -0 below +0 (IEEE 754-2019's maximum and minimum, as
// XLA's, so JAX's answers): elementwise, in reductions and in cummax and
// cummin, eagerly and under jit on the interpreter and the generated C++.
// (tests/cuda/cuda_devices_test.cpp checks the CUDA kernels' bits against these.)
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "graft/graft.h"

using namespace graft;

namespace {

// 1 where an element is negative (its sign bit), for f32 and f64 alike.
std::vector<int> signs(const Array& a) {
  std::vector<int> s;
  for (double v : astype(a, f64).to_vector<double>()) {
    REQUIRE(v == 0.0);
    s.push_back(std::signbit(v) ? 1 : 0);
  }
  return s;
}

}  // namespace

TEST_CASE("signed zeros: max and min order -0 below +0 on every CPU path", "[edge_values]") {
  using Fn = std::function<Array(const Array&, const Array&)>;
  struct Case {
    std::string name;
    Fn f;
    std::vector<int> want;  // sign bits of the result
  };
  // a = [-0, +0, -0, +0], b = [+0, -0, -0, +0]
  const std::vector<Case> cases = {
      {"maximum", [](const Array& a, const Array& b) { return maximum(a, b); }, {0, 0, 1, 0}},
      {"minimum", [](const Array& a, const Array& b) { return minimum(a, b); }, {1, 1, 1, 0}},
      // rows of a: [-0, +0], [-0, +0]; of b: [+0, -0], [-0, +0]
      {"max of rows",
       [](const Array& a, const Array& b) {
         return max(reshape(concatenate({a, b}), {4, 2}), {1});
       },
       {0, 0, 0, 0}},
      {"min of rows",
       [](const Array& a, const Array& b) {
         return min(reshape(concatenate({a, b}), {4, 2}), {1});
       },
       {1, 1, 1, 1}},
      {"max of -0 only",
       [](const Array& a, const Array&) {
         return max(reshape(-abs(a), {2, 2}), {1});
       },
       {1, 1}},
      {"min of +0 only",
       [](const Array& a, const Array&) {
         return min(reshape(abs(a), {2, 2}), {1});
       },
       {0, 0}},
      {"cummax", [](const Array& a, const Array&) { return cummax(a, 0); }, {1, 0, 0, 0}},
      {"cummin", [](const Array&, const Array& b) { return cummin(b, 0); }, {0, 1, 1, 1}},
  };
  for (DType dt : {f32, f64}) {
    const Array a = astype(array<float>({-0.0f, 0.0f, -0.0f, 0.0f}), dt),
                b = astype(array<float>({0.0f, -0.0f, -0.0f, 0.0f}), dt);
    for (const Case& c : cases) {
      INFO(c.name << " in " << dtype_name(dt));
      CHECK(signs(c.f(a, b)) == c.want);
      CHECK(signs(jit(c.f, JitOptions{.backend = Backend::interpreter})(a, b)) == c.want);
      CHECK(signs(jit(c.f, JitOptions{.backend = Backend::cpu, .wait_for_compile = true})(a, b)) == c.want);
    }
  }
}
