// What porting JAX programs trips on: take/put_along_axis, tril/triu,
// diag/diagonal/trace, remainder/floor_divide/%, dtype arguments on
// creation functions and *_like, the x64 switch, and the while-loop trip
// limit. Values against loops and NumPy's rules; gradients against finite
// differences; vmap against a loop.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "graft/graft.h"
#include "support/arrays.h"
#include "support/shell.h"

using namespace graft;
using graft::test::check_close;
using graft::test::randn;
using graft::test::values;

TEST_CASE("take_along_axis and put_along_axis equal loops, differentiate and batch", "[numpy_helpers]") {
  Array x = randn({3, 5}, 1);
  Array idx = array(std::vector<int32_t>{4, 0, -1, 2, 2, 1}, {3, 2});
  const std::vector<double> xv = values(x);
  for (int axis : {1, -1}) {
    Array t = take_along_axis(x, idx, axis);
    REQUIRE(t.shape() == Shape{3, 2});
    const std::vector<double> tv = values(t);
    const std::vector<int32_t> iv = idx.to_vector<int32_t>();
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 2; ++j) {
        int k = iv[static_cast<size_t>(i * 2 + j)];
        if (k < 0) k += 5;
        CHECK(tv[static_cast<size_t>(i * 2 + j)] == xv[static_cast<size_t>(i * 5 + k)]);
      }
  }
  // Along axis 0 with an index row broadcast over the columns (argsort-style use).
  Array idx0 = array(std::vector<int32_t>{2, 0}, {2, 1});
  Array t0 = take_along_axis(x, idx0, 0);
  REQUIRE(t0.shape() == Shape{2, 5});
  for (int j = 0; j < 5; ++j) {
    CHECK(values(t0)[static_cast<size_t>(j)] == xv[static_cast<size_t>(2 * 5 + j)]);
    CHECK(values(t0)[static_cast<size_t>(5 + j)] == xv[static_cast<size_t>(j)]);
  }
  // The classic: sorting each row by argsort.
  Array sorted = take_along_axis(x, argsort(x, 1), 1);
  check_close(sorted, sort(x, 1), 0);
  // put: the last of repeated entries wins, others untouched.
  Array p = put_along_axis(x, idx, full({3, 2}, 7.0), 1);
  std::vector<double> want = xv;
  const std::vector<int32_t> iv = idx.to_vector<int32_t>();
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j) want[static_cast<size_t>(i * 5 + (iv[static_cast<size_t>(i * 2 + j)] + 5) % 5)] = 7.0;
  CHECK(values(p) == want);
  // The gradient of take_along_axis scatters ones back: d sum(take) / dx counts each pick.
  Array g = grad([&](const Array& a) { return sum(take_along_axis(a, idx, 1)); })(x);
  std::vector<double> counts(15, 0.0);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j) counts[static_cast<size_t>(i * 5 + (iv[static_cast<size_t>(i * 2 + j)] + 5) % 5)] += 1;
  CHECK(values(g) == counts);
  // vmap equals a loop over a batch of arrays and index sets.
  Array xb = randn({4, 3, 5}, 2);
  Array ib = astype(clip(floor(random::uniform(random::key(3), {4, 3, 2}) * 5.0), 0, 4), i32);
  Array vb = vmap([](const Array& a, const Array& i) { return take_along_axis(a, i, 1); })(xb, ib);
  for (int64_t b = 0; b < 4; ++b) check_close(vb[b], take_along_axis(xb[b], ib[b], 1), 0);
  CHECK_THROWS_AS(take_along_axis(x, array({1, 2}), 1), ShapeError);          // rank differs
  CHECK_THROWS_AS(take_along_axis(x, full({3, 2}, 1.0), 1), DTypeError);      // float indices
}

TEST_CASE("tril, triu, diag, diagonal and trace match NumPy's definitions", "[numpy_helpers]") {
  Array m = reshape(astype(arange(12), f32), {3, 4});
  CHECK(values(tril(m)) == std::vector<double>{0, 0, 0, 0, 4, 5, 0, 0, 8, 9, 10, 0});
  CHECK(values(tril(m, -1)) == std::vector<double>{0, 0, 0, 0, 4, 0, 0, 0, 8, 9, 0, 0});
  CHECK(values(triu(m, 1)) == std::vector<double>{0, 1, 2, 3, 0, 0, 6, 7, 0, 0, 0, 11});
  // Batched over leading axes.
  Array b = stack({m, m * 2.0});
  check_close(tril(b)[1], tril(m) * 2.0, 0);
  CHECK(values(diag(m)) == std::vector<double>{0, 5, 10});
  CHECK(values(diag(m, 1)) == std::vector<double>{1, 6, 11});
  CHECK(values(diag(m, -1)) == std::vector<double>{4, 9});
  CHECK(values(diag(m, 4)).empty());
  CHECK(values(diag(array({1.0f, 2.0f}), 1)) == std::vector<double>{0, 1, 0, 0, 0, 2, 0, 0, 0});
  CHECK(values(diag(array({1.0f, 2.0f}), -1)) == std::vector<double>{0, 0, 0, 1, 0, 0, 0, 2, 0});
  CHECK(trace(m).item<float>() == 15.0f);
  CHECK(trace(m, 1).item<float>() == 18.0f);
  Array c = reshape(astype(arange(24), f32), {2, 3, 4});
  Array d = diagonal(c, 0, 1, 2);  // [2, 3]: c[k, i, i]
  CHECK(values(d) == std::vector<double>{0, 5, 10, 12, 17, 22});
  Array d2 = diagonal(c, 1, 0, 2);  // [3, 2]: c[i, j, i + 1]
  CHECK(d2.shape() == Shape{3, 2});
  CHECK(values(d2) == std::vector<double>{1, 14, 5, 18, 9, 22});
  // The gradient of trace is the identity; of tril, the mask.
  check_close(grad([](const Array& a) { return trace(a); })(eye(3)), eye(3), 0);
  check_close(grad([](const Array& a) { return sum(tril(a)); })(ones({3, 3})), tril(ones({3, 3})), 0);
  CHECK_THROWS_AS(diagonal(c, 0, 1, 1), ShapeError);
  CHECK_THROWS_AS(tril(array({1.0f})), ShapeError);
}

TEST_CASE("remainder, floor_divide and % follow NumPy: the sign of the divisor", "[numpy_helpers]") {
  Array a = array({7, -7, 7, -7, 0, 6}), b = array({3, 3, -3, -3, 5, 3});
  CHECK(remainder(a, b).to_vector<int32_t>() == std::vector<int32_t>{1, 2, -2, -1, 0, 0});
  CHECK((a % b).to_vector<int32_t>() == std::vector<int32_t>{1, 2, -2, -1, 0, 0});
  CHECK(floor_divide(a, b).to_vector<int32_t>() == std::vector<int32_t>{2, -3, -3, 2, 0, 2});
  CHECK((a % 3).to_vector<int32_t>() == std::vector<int32_t>{1, 2, 1, 2, 0, 0});
  CHECK((10 % b).to_vector<int32_t>() == std::vector<int32_t>{1, 1, -2, -2, 0, 1});
  Array x = array({5.5f, -5.5f, 5.5f, -5.5f, 1.0f}), y = array({2.0f, 2.0f, -2.0f, -2.0f, 0.5f});
  CHECK(values(remainder(x, y)) == std::vector<double>{1.5, 0.5, -0.5, -1.5, 0});
  CHECK(values(x % y) == std::vector<double>{1.5, 0.5, -0.5, -1.5, 0});
  CHECK(values(floor_divide(x, y)) == std::vector<double>{2, -3, -3, 2, 2});
  CHECK(values(remainder(x, 2.0)) == std::vector<double>{1.5, 0.5, 1.5, 0.5, 1});
  CHECK(values(floor_divide(x, 2)) == std::vector<double>{2, -3, 2, -3, 0});
  // Promotion as the other binary ops: an int array and a float number compute in f32.
  CHECK((a % 2.5).dtype() == f32);
  // a == floor_divide(a, b) * b + remainder(a, b) over random values.
  Array u = randn({1000}, 5) * 10.0, v = randn({1000}, 6) * 3.0 + 0.1;
  check_close(floor_divide(u, v) * v + remainder(u, v), u, 2e-5);
  // d remainder / da = 1.
  check_close(grad([](const Array& t) { return sum(t % 3.0); })(array({1.25f, -4.5f})), ones({2}), 0);
  // Under jit the same values.
  check_close(jit([](const Array& p, const Array& q) { return p % q; })(x, y), x % y, 0);
}

TEST_CASE("dtype arguments: eye, linspace, zeros_like, ones_like, full_like", "[numpy_helpers]") {
  CHECK(eye(3, f64).dtype() == f64);
  CHECK(values(eye(2, i32)) == std::vector<double>{1, 0, 0, 1});
  CHECK(eye(2).dtype() == default_float_dtype());
  CHECK(values(linspace(0, 1, 5)) == std::vector<double>{0, 0.25, 0.5, 0.75, 1});
  CHECK(values(linspace(0, 1, 4, f64, false)) == std::vector<double>{0, 0.25, 0.5, 0.75});
  CHECK(linspace(0, 1, 3, f64).dtype() == f64);
  CHECK(linspace(-1, 1, 7, f32).to_vector<float>().back() == 1.0f);  // stop exactly
  Array x = randn({2, 3}, 1);
  CHECK(zeros_like(x).shape() == x.shape());
  CHECK(values(zeros_like(x)) == std::vector<double>(6, 0.0));
  CHECK(ones_like(x, i32).dtype() == i32);
  CHECK(values(full_like(x, 2.5)) == std::vector<double>(6, 2.5));
  CHECK(full_like(x, 2.5, f64).dtype() == f64);
  // Inside a trace they make constants of the traced value's shape.
  check_close(jit([](const Array& a) { return a + ones_like(a); })(x), x + 1.0, 0);
}

TEST_CASE("x64 (child): GRAFT_ENABLE_X64=1 makes the defaults 64-bit", "[.child_x64]") {
  CHECK(default_float_dtype() == f64);
  CHECK(default_int_dtype() == i64);
  CHECK(zeros({2}).dtype() == f64);
  CHECK(scalar(1.5).dtype() == f64);
  CHECK(arange(3).dtype() == i64);
  CHECK(arange(0.0, 1.0, 0.5).dtype() == f64);
  CHECK(linspace(0, 1, 3).dtype() == f64);
  CHECK(eye(2).dtype() == f64);
  CHECK(random::normal(random::key(0), {3}).dtype() == f64);
  CHECK(random::uniform(random::key(0), {3}).dtype() == f64);
  CHECK((arange(3) * 0.5).dtype() == f64);      // a weak float with an int array: the default float
  CHECK(sin(arange(3)).dtype() == f64);          // float functions of ints
  CHECK((array({1, 2}) / array({2, 2})).dtype() == f64);
  CHECK((zeros({2}, f32) * 2.0).dtype() == f32);  // weak scalars still take the array's dtype
}

TEST_CASE("x64: the switch, in a child process", "[numpy_helpers]") {
  CHECK(default_float_dtype() == f32);
  CHECK(default_int_dtype() == i32);
  graft::test::check_child_passes("GRAFT_ENABLE_X64=1", "[.child_x64]");
}

TEST_CASE("while trip limit (child): a loop past GRAFT_WHILE_MAX_TRIPS is an Error", "[.child_while_limit]") {
  auto count = [](const Array& n) {
    return while_loop([&](const Array& i) { return i < n; }, [](const Array& i) { return i + 1; }, scalar(0, i32));
  };
  CHECK(count(scalar(50, i32)).item<int32_t>() == 50);
  CHECK_THROWS_WITH(count(scalar(5000, i32)), Catch::Matchers::Contains("more than 100 iterations"));
}

TEST_CASE("while trip limit: set by the environment, in a child process", "[numpy_helpers]") {
  graft::test::check_child_passes("GRAFT_WHILE_MAX_TRIPS=100", "[.child_while_limit]");
}

TEST_CASE("indexing lists take none (a new axis) and ellipsis, arrays come from nested lists", "[numpy_helpers]") {
  Array x = reshape(astype(arange(24), f32), {2, 3, 4});
  CHECK(x[{none}].shape() == Shape{1, 2, 3, 4});
  CHECK(x[{Slice(), none}].shape() == Shape{2, 1, 3, 4});
  CHECK(x[{0, none, Slice(1, 3)}].shape() == Shape{1, 2, 4});
  CHECK(x[{ellipsis, 1}].shape() == Shape{2, 3});
  CHECK(values(x[{ellipsis, 1}]) == values(x[{Slice(), Slice(), 1}]));
  CHECK(x[{1, ellipsis}].shape() == Shape{3, 4});
  CHECK(x[{ellipsis, none}].shape() == Shape{2, 3, 4, 1});
  CHECK(x[{none, ellipsis, none}].shape() == Shape{1, 2, 3, 4, 1});
  CHECK(values(x[{0, ellipsis, none, 2}]) == std::vector<double>{2, 6, 10});
  CHECK_THROWS_AS((x[{ellipsis, ellipsis}]), ShapeError);
  CHECK_THROWS_AS((x.at({none, 0}).set(1.0)), ShapeError);
  CHECK(values(x.at({ellipsis, 0}).set(-1.0)[{ellipsis, 0}]) == std::vector<double>(6, -1.0));
  // Differentiable and jittable like any index.
  check_close(grad([](const Array& a) { return sum(a[{ellipsis, 1, none}]); })(x),
              grad([](const Array& a) { return sum(a[{Slice(), Slice(), 1}]); })(x), 0);
  check_close(jit([](const Array& a) { return a[{none, ellipsis, 3}]; })(x), reshape(x[{Slice(), Slice(), 3}], {1, 2, 3}), 0);

  Array m = array({{1, 2, 3}, {4, 5, 6}});
  CHECK(m.shape() == Shape{2, 3});
  CHECK(m.dtype() == i32);
  CHECK(m.to_vector<int32_t>() == std::vector<int32_t>{1, 2, 3, 4, 5, 6});
  Array c = array({{{1.5f, 2.5f}}, {{3.5f, 4.5f}}});
  CHECK(c.shape() == Shape{2, 1, 2});
  CHECK(c.dtype() == f32);
  CHECK_THROWS_AS((array({{1.0, 2.0}, {3.0}})), ShapeError);
}
