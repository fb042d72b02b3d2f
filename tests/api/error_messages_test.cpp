// Every error names the operation and the user's file and line: use of a
// donated array, grad of a non-scalar, vmap/pmap axis mismatches,
// ConcretizationError, and errors raised while a transform runs the
// user's function. Each check asserts this file's name and the line.
#include <catch2/catch.hpp>
#include <string>

#include "graft/graft.h"

using namespace graft;
using Catch::Matchers::Contains;

namespace {

// "error_messages_test.cpp:<line>", the place a message must name.
std::string here(int line) { return "error_messages_test.cpp:" + std::to_string(line); }

template <class E, class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  FAIL("no error of the expected type was thrown");
  return {};
}

}  // namespace

TEST_CASE("errors: use of a donated array names the op and the line", "[errors][donation]") {
  Array p = array({1.0f, 2.0f});
  auto step = jit([](const Array& a) { return a * 2.0f; }, {.donate_argnums = {0}});
  Array q = step(p);
  CHECK(p.is_deleted());
  CHECK(p.shape() == Shape{2});  // a donated Array keeps its shape and dtype, as in JAX
  int line = __LINE__ + 1;
  std::string m = message_of<DonatedArrayError>([&] { return p + 1.0f; });
  CHECK_THAT(m, Contains("add") && Contains(here(line)) && Contains("f32[2]") && Contains("donated"));
  line = __LINE__ + 1;
  m = message_of<DonatedArrayError>([&] { return sum(p); });
  CHECK_THAT(m, Contains("reduce_sum") && Contains(here(line)));
  line = __LINE__ + 1;
  m = message_of<DonatedArrayError>([&] { return p.to_vector<float>(); });
  CHECK_THAT(m, Contains("to_vector") && Contains(here(line)));
  CHECK_THROWS_AS(step(p), DonatedArrayError);
  CHECK(q.to_vector<float>() == std::vector<float>{2, 4});
}

TEST_CASE("errors: grad of a non-scalar names where the value was computed", "[errors][grad]") {
  Array x = array({1.0, 2.0});
  int made = __LINE__ + 1;
  auto g = grad([](const Array& a) { return a * 2.0; });
  std::string m = message_of<ShapeError>([&] { return g(x); });
  CHECK_THAT(m, Contains("grad") && Contains("f64[2]") && Contains(here(made)));
  made = __LINE__ + 1;
  auto gi = grad([](const Array& a) { return astype(sum(a), i32); });
  CHECK_THAT(message_of<DTypeError>([&] { return gi(x); }), Contains("float") && Contains(here(made)));
}

TEST_CASE("errors: vmap and pmap axis mismatches name the transform's line", "[errors][vmap][pmap]") {
  int made = __LINE__ + 1;
  auto add = vmap([](const Array& a, const Array& b) { return a + b; });
  std::string m = message_of<ShapeError>([&] { return add(zeros({3}), zeros({4})); });
  CHECK_THAT(m, Contains("vmap") && Contains("3") && Contains("4") && Contains(here(made)));
  made = __LINE__ + 1;
  auto none_mapped = vmap([](const Array& a) { return a; }, none);
  CHECK_THAT(message_of<ShapeError>([&] { return none_mapped(zeros({3})); }), Contains(here(made)));
  made = __LINE__ + 1;
  auto too_many = pmap([](const Array& a) { return a; });
  m = message_of<ShapeError>([&] { return too_many(zeros({static_cast<int64_t>(devices().size()) + 1, 2})); });
  CHECK_THAT(m, Contains("pmap") && Contains(here(made)));
}

TEST_CASE("errors: ConcretizationError names where the value was made or needed", "[errors][tracing]") {
  Array x = array({1.0, 2.0});
  int made = __LINE__ + 2;
  auto branchy = grad([](const Array& a) {
    Array positive = sum(a) > 0.0;
    if (positive) return sum(a);
    return -sum(a);
  });
  CHECK_THAT(message_of<ConcretizationError>([&] { return branchy(x); }), Contains("bool") && Contains(here(made)));
  int needed = __LINE__ + 1;
  auto reads = grad([](const Array& a) { return a[0] * a.item<double>(); });
  CHECK_THAT(message_of<ConcretizationError>([&] { return reads(array({2.0})); }),
             Contains("item") && Contains(here(needed)));
}

TEST_CASE("errors: raised while a transform runs the user's function, they name the op and line", "[errors]") {
  Array x = array({1.0, 2.0});
  int line = __LINE__ + 1;
  auto bad = [](const Array& a) { return sum(matmul(a, zeros({3, 3}, f64))); };
  for (const std::string& m : {message_of<ShapeError>([&] { return grad(bad)(x); }),
                               message_of<ShapeError>([&] { return vmap(bad)(zeros({2, 2}, f64)); }),
                               message_of<ShapeError>([&] { return jit(bad)(x); }),
                               message_of<ShapeError>([&] { return jacrev(bad)(x); })}) {
    CHECK_THAT(m, Contains("matmul") && Contains(here(line)));
  }
}
