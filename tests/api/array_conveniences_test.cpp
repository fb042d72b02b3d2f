// What a NumPy/JAX user reaches for on Array: printing, compound
// assignment, basic indexing with slices and JAX's x.at[...] updates
// (checked against hand-computed NumPy results, finite differences, vmap
// equal to a loop, and jit equal to eager).
#include <catch2/catch.hpp>
#include <sstream>

#include "graft/graft.h"
#include "graft/testing.h"

using namespace graft;

namespace {

std::vector<double> values(const Array& a) { return astype(a, f64).to_vector<double>(); }

std::string str(const Array& a) {
  std::ostringstream os;
  os << a;
  return os.str();
}

}  // namespace

TEST_CASE("Array printing: values, dtype and shape, large arrays summarised", "[array][print]") {
  CHECK(str(array({1.0, 2.5})) == "Array([ 1., 2.5], dtype=f64, shape=(2,))");
  CHECK(str(scalar(3.0)) == "Array(3., dtype=f32, shape=())");
  CHECK(str(array({1, -2})) == "Array([ 1, -2], dtype=i32, shape=(2,))");
  CHECK(str(array({1.0}) > 0.0) == "Array([true], dtype=bool, shape=(1,))");
  CHECK(str(reshape(arange(4), {2, 2})) == "Array([[0, 1],\n       [2, 3]], dtype=i32, shape=(2, 2))");
  std::string big = str(arange(5000));
  CHECK(big.find("...") != std::string::npos);
  CHECK(big.find("4999") != std::string::npos);
  CHECK(big.size() < 200);
  CHECK(str(Array()) == "Array(<empty>)");
  // Inside a transform an Array has no values yet.
  std::string traced;
  grad([&](const Array& a) {
    traced = str(a);
    return sum(a);
  })(array({1.0, 2.0}));
  CHECK(traced == "Traced<f64[2]>");
}

TEST_CASE("Array compound assignment rebinds the handle", "[array]") {
  Array x = array({1.0, 2.0});
  Array kept = x;
  x += 1.0;
  x *= array({2.0, 3.0});
  x -= 0.5;
  x /= 2;
  CHECK(values(x) == std::vector<double>{1.75, 4.25});
  CHECK(values(kept) == std::vector<double>{1.0, 2.0});  // the old Array is untouched
  Array i = array({1, 2});
  i += 1;  // an integer stays an integer
  CHECK(i.dtype() == i32);
  // Inside a transform too.
  auto f = [](const Array& a) {
    Array y = a;
    y *= a;
    y += 3.0;
    return sum(y);
  };
  CHECK(values(grad(f)(array({1.0, -2.0}))) == std::vector<double>{2.0, -4.0});
}

TEST_CASE("Array basic indexing with integers and slices, as NumPy", "[array][indexing]") {
  Array m = reshape(arange(12, f64), {3, 4});
  CHECK(values(m[{1}]) == std::vector<double>{4, 5, 6, 7});
  CHECK(values(m[{1, 2}]) == std::vector<double>{6});
  CHECK(m[{1, 2}].shape() == Shape{});
  CHECK(values(m[{Slice(), 1}]) == std::vector<double>{1, 5, 9});
  CHECK(values(m[{Slice(1, std::nullopt), Slice(std::nullopt, std::nullopt, 2)}]) == std::vector<double>{4, 6, 8, 10});
  CHECK(values(m[{-1, Slice(std::nullopt, std::nullopt, -1)}]) == std::vector<double>{11, 10, 9, 8});  // m[-1, ::-1]
  CHECK(values(m[{Slice(-2, std::nullopt), Slice(1, 3)}]) == std::vector<double>{5, 6, 9, 10});
  CHECK(m[{Slice(5, 9)}].shape() == Shape{0, 4});  // out-of-range bounds clamp to empty
  CHECK_THROWS_AS((m[{3}]), ShapeError);
  CHECK_THROWS_AS((m[{0, 0, 0}]), ShapeError);
  CHECK_THROWS_AS((m[{Slice(0, 2, 0)}]), ShapeError);
}

TEST_CASE("x.at[...]: set, add, mul, min, max and get, as JAX", "[array][indexing][at]") {
  Array x = array({1.0, 2.0, 3.0, 4.0, 5.0});
  CHECK(values(x.at(1).set(10.0)) == std::vector<double>{1, 10, 3, 4, 5});
  CHECK(values(x.at(-1).add(1.0)) == std::vector<double>{1, 2, 3, 4, 6});
  CHECK(values(x.at(2).get()) == std::vector<double>{3});
  // Integer index arrays: repeats accumulate in add, the last update wins in set,
  // every update applies in mul/min/max; out of range is dropped (get clamps).
  Array idx = array({0, 0, 7, -2});
  CHECK(values(x.at(idx).add(array({1.0, 2.0, 3.0, 4.0}))) == std::vector<double>{4, 2, 3, 8, 5});
  CHECK(values(x.at(idx).set(array({1.0, 2.0, 3.0, 4.0}))) == std::vector<double>{2, 2, 3, 4, 5});
  CHECK(values(x.at(idx).mul(array({2.0, 3.0, 5.0, 7.0}))) == std::vector<double>{6, 2, 3, 28, 5});
  CHECK(values(x.at(idx).min(array({0.5, -1.0, 0.0, 9.0}))) == std::vector<double>{-1, 2, 3, 4, 5});
  CHECK(values(x.at(idx).max(array({0.5, 7.0, 0.0, 9.0}))) == std::vector<double>{7, 2, 3, 9, 5});
  CHECK(values(x.at(array({4, 9, -1})).get()) == std::vector<double>{5, 5, 5});
  // A scalar update broadcasts; the update takes x's dtype.
  CHECK(values(x.at(array({1, 3})).set(0)) == std::vector<double>{1, 0, 3, 0, 5});
  // Rows of a matrix, and a per-axis list with slices.
  Array m = reshape(arange(6, f64), {2, 3});
  CHECK(values(m.at(array({1})).set(array({7.0, 8.0, 9.0}))) == std::vector<double>{0, 1, 2, 7, 8, 9});
  CHECK(values(m.at({Slice(), 1}).mul(10.0)) == std::vector<double>{0, 10, 2, 3, 40, 5});
  CHECK(values(m.at({1, Slice(0, 2)}).add(array({1.0, 2.0}))) == std::vector<double>{0, 1, 2, 4, 6, 5});
  CHECK(values(m.at({0, Slice(std::nullopt, std::nullopt, 2)}).max(1.5)) == std::vector<double>{1.5, 1, 2, 3, 4, 5});
  CHECK(values(m.at({Slice(), Slice(1, std::nullopt)}).get()) == std::vector<double>{1, 2, 4, 5});
  // Integer arrays.
  Array ints = array({5, 6, 7});
  CHECK(ints.at(0).set(1).to_vector<int32_t>() == std::vector<int32_t>{1, 6, 7});
  CHECK(ints.at(array({2, 2})).add(1).to_vector<int32_t>() == std::vector<int32_t>{5, 6, 9});
  // Errors name the update and the caller's line.
  try {
    x.at(array({1.0})).set(1.0);
    FAIL("float indices were accepted");
  } catch (const DTypeError& e) {
    CHECK_THAT(e.what(), Catch::Contains("at().set") && Catch::Contains("array_conveniences_test.cpp"));
  }
  CHECK_THROWS_AS(x.at(array({1, 2})).set(array({1.0, 2.0, 3.0})), ShapeError);
}

TEST_CASE("x.at[...] differentiates, batches and jits", "[array][indexing][at][transforms]") {
  Array x = array({0.5, -1.0, 2.0, 0.3});
  Array idx = array({2, 0, 2, 9});
  using F = std::function<Array(const Array&)>;
  std::vector<std::pair<const char*, F>> cases = {
      {"set", [&](const Array& a) { return a.at(idx).set(graft::sin(a) * 2.0); }},
      {"add", [&](const Array& a) { return a.at(idx).add(graft::square(a)); }},
      {"mul", [&](const Array& a) { return a.at(idx).mul(a + 3.0); }},
      {"min", [&](const Array& a) { return a.at(idx).min(a * array({0.1, 0.7, 3.0, 5.0})); }},
      {"max", [&](const Array& a) { return a.at(idx).max(a * array({0.1, 0.7, 3.0, 5.0})); }},
      {"get", [&](const Array& a) { return a.at(idx).get() * a; }},
      {"list", [&](const Array& a) { return a.at({Slice(1, 3)}).mul(a[{Slice(2, 4)}]); }},
  };
  for (auto& [name, f] : cases) {
    INFO(name);
    testing::check_grads(f, std::make_tuple(x), 1);
    CHECK(values(jit(f)(x)) == values(f(x)));
    Array batch = stack({x, x * 2.0, x - 1.0});
    Array mapped = vmap(f)(batch);
    for (int b = 0; b < 3; ++b) CHECK(values(mapped[b]) == values(f(batch[b])));
  }
  // A batched index array: each example updates its own rows.
  Array rows = array<int32_t>({0, 1, 3, 3}, {2, 2});
  Array ys = vmap([&](const Array& r) { return x.at(r).set(array({10.0, 20.0})); })(rows);
  CHECK(values(ys[0]) == std::vector<double>{10, 20, 2, 0.3});
  CHECK(values(ys[1]) == std::vector<double>{0.5, -1, 2, 20});
}

TEST_CASE("unary ops pass to transforms directly and still record the caller's line", "[array][transforms]") {
  Array x = array({0.5, -1.0, 2.0});
  CHECK(values(vmap(graft::sin)(x)) == values(graft::sin(x)));
  CHECK(values(jit(graft::exp)(x)) == values(graft::exp(x)));
  CHECK(values(grad([](const Array& a) { return sum(graft::tanh(a)); })(x)) ==
        values(1.0 - graft::square(graft::tanh(x))));
  Array sq = vmap(graft::sqrt)(array({4.0, 9.0}));
  CHECK(values(sq) == std::vector<double>{2.0, 3.0});
  // The line recorded by a direct call is the caller's.
  Graph g = make_graph([](const Array& a) { return graft::cos(a); })(x);
  CHECK_THAT(g.to_json(), Catch::Contains("array_conveniences_test.cpp"));
  auto step = jit([](const Array& a) { return a * 2.0; }, {.donate_argnums = {0}});
  Array p = array({1.0});
  step(p);
  int line = __LINE__ + 2;
  try {
    graft::exp(p);
    FAIL("a donated array was used");
  } catch (const DonatedArrayError& e) {
    CHECK_THAT(e.what(), Catch::Contains("array_conveniences_test.cpp:" + std::to_string(line)));
  }
}
