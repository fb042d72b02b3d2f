// check_grads accepts correct derivatives and rejects wrong ones.
#include <catch2/catch.hpp>

#include "graft/graft.h"
#include "graft/testing.h"

using namespace graft;
using Catch::Matchers::Contains;

namespace {
// A function whose custom (wrong) derivative we can plant: f(x) = x^3 computed
// as x * stop_gradient(x^2): its true derivative is 3x^2, autodiff says x^2.
Array wrong_cube(const Array& x) { return x * stop_gradient(x * x); }
}  // namespace

TEST_CASE("check_grads: passes for correct derivatives, f32 and f64, order 1 and 2", "[transforms][check_grads]") {
  Array x64 = array<double>({0.3, -0.8, 1.5});
  Array x32 = astype(x64, f32);
  auto f = [](const Array& a, const Array& b) { return std::make_pair(graft::tanh(a) * b, sum(graft::exp(a * b))); };
  CHECK_NOTHROW(testing::check_grads(f, std::make_tuple(x64, x64 * 2.0)));
  CHECK_NOTHROW(testing::check_grads(f, std::make_tuple(x32, x32 * 2.0f), 1));
  CHECK_NOTHROW(testing::check_grads([](const Array& a) { return matmul(reshape(a, {1, 3}), reshape(a, {3, 1})); },
                                     std::make_tuple(x64), 2, testing::Modes::rev));
}

TEST_CASE("check_grads: reports a wrong derivative", "[transforms][check_grads]") {
  Array x = array<double>({0.5, 1.0, 2.0});
  try {
    testing::check_grads([](const Array& a) { return wrong_cube(a); }, std::make_tuple(x), 1, testing::Modes::fwd);
    FAIL("a wrong derivative passed");
  } catch (const Error& e) {
    CHECK_THAT(e.what(), Contains("jvp vs finite differences"));
  }
  CHECK_THROWS_AS(testing::check_grads([](const Array& a) { return a; }, std::make_tuple(array({1, 2}))), DTypeError);
}
