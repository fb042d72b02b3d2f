// The NumPy surface added beside ops.h's first set: plain-number operands,
// any/all, var/std, outer, split, tile, repeat, arange(start, stop, step),
// cumsum(reverse) and einsum diagonals. Values come from loops and closed
// forms written here; derivatives from finite differences; vmap from loops.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <string>

#include "graft/graft.h"
#include "graft/testing.h"

using namespace graft;
using Catch::Matchers::Contains;

namespace {

const std::string kThisFile = std::string(__FILE__).substr(std::string(__FILE__).find_last_of('/') + 1);

std::vector<double> d(const Array& a) { return astype(a, f64).to_vector<double>(); }
std::vector<int32_t> i32s(const Array& a) { return a.to_vector<int32_t>(); }
std::vector<bool> bools(const Array& a) {
  std::vector<bool> out;
  for (int32_t v : astype(a, i32).to_vector<int32_t>()) out.push_back(v != 0);
  return out;
}

void check_close(const Array& got, const std::vector<double>& want, double tol = 1e-12) {
  std::vector<double> g = d(got);
  REQUIRE(g.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("element " << i);
    CHECK(g[i] == Approx(want[i]).epsilon(tol).margin(tol));
  }
}
void check_close(const Array& got, const Array& want, double tol = 1e-12) {
  REQUIRE(got.shape() == want.shape());
  check_close(got, d(want), tol);
}

// An error of type E whose message names the op and this file.
template <class E, class F>
void check_error(F f, const std::string& op) {
  try {
    f();
    FAIL("no error from " << op);
  } catch (const E& e) {
    CHECK_THAT(e.what(), Contains(op) && Contains(kThisFile));
  }
}

Array matrix() { return array<double>({0.5, -1.0, 2.0, 0.25, 3.0, -0.75, 1.5, -2.5, 0.1, 4.0, -0.2, 0.6}, {3, 4}); }

}  // namespace

TEST_CASE("numbers as operands: pow uses the exact double exponent on f64", "[api][numpy][scalars]") {
  std::vector<double> xs = {0.1, 0.7, 1.3, 2.9, 17.0, 1234.5};
  Array x = array(xs, {6});
  Array y = pow(x, 0.37);
  CHECK(y.dtype() == f64);
  std::vector<double> got = y.to_vector<double>();
  for (size_t i = 0; i < xs.size(); ++i) CHECK(std::fabs(got[i] - std::pow(xs[i], 0.37)) <= 1e-15 * std::pow(xs[i], 0.37));
  // f32 keeps its dtype (the number is weak); integers compute in f32.
  CHECK(pow(astype(x, f32), 0.37).dtype() == f32);
  CHECK(pow(array({1, 2, 3}), 2).dtype() == f32);
  check_close(pow(array({1, 2, 3}), 2), {1, 4, 9});
  // The number first: 2^x, and its derivative ln 2 * 2^x.
  Array e = array<double>({-1, 0, 0.5, 3});
  check_close(pow(2.0, e), {0.5, 1, std::sqrt(2.0), 8});
  check_close(grad([](const Array& v) { return sum(pow(2.0, v)); })(e),
              {0.5 * std::log(2.0), std::log(2.0), std::sqrt(2.0) * std::log(2.0), 8 * std::log(2.0)});
  // (away from 0, where x^0.37's curvature outruns the finite differences)
  CHECK_NOTHROW(testing::check_grads([](const Array& v) { return pow(v, 0.37); }, std::make_tuple(x + 0.5)));
  CHECK_NOTHROW(testing::check_grads([](const Array& v) { return pow(1.7, v); }, std::make_tuple(e)));
}

TEST_CASE("numbers as operands: maximum, minimum, atan2, where", "[api][numpy][scalars]") {
  Array x = array<double>({-2, -0.5, 0, 1.5});
  check_close(maximum(x, 0.0), {0, 0, 0, 1.5});
  check_close(maximum(0.0, x), {0, 0, 0, 1.5});
  check_close(minimum(x, -1), {-2, -1, -1, -1});
  CHECK(maximum(x, 0.0).dtype() == f64);
  // Weak typing as the operators: an int array stays int with an int number and goes to f32 with a float one.
  CHECK(maximum(array({-3, 4}), 0).dtype() == i32);
  CHECK(i32s(maximum(array({-3, 4}), 0)) == std::vector<int32_t>{0, 4});
  CHECK(maximum(array({-3, 4}), 0.5).dtype() == f32);
  check_close(maximum(array({-3, 4}), 0.5), {0.5, 4});
  check_close(atan2(x, 1.0), {std::atan2(-2, 1), std::atan2(-0.5, 1), 0, std::atan2(1.5, 1)}, 1e-15);
  check_close(atan2(1.0, x), {std::atan2(1, -2), std::atan2(1, -0.5), std::atan2(1, 0), std::atan2(1, 1.5)}, 1e-15);
  Array c = array({true, false, true, false});
  check_close(where(c, x, 0.0), {-2, 0, 0, 0});
  check_close(where(c, 0.0, x), {0, -0.5, 0, 1.5});
  CHECK(where(c, x, 7).dtype() == f64);
  // A scalar condition and a broadcasting one.
  check_close(where(reshape(array({true, false}), {2, 1}), 1.0, reshape(x, {2, 2})), {1, 1, 0, 1.5});
  CHECK_NOTHROW(testing::check_grads([](const Array& v) { return where(v > 0.0, v * v, 0.0); }, std::make_tuple(x + 0.25)));
  CHECK_NOTHROW(testing::check_grads([](const Array& v) { return atan2(v, 2.0) + atan2(2.0, v); }, std::make_tuple(x)));
  check_error<ShapeError>([&] { where(array({true, false, true}), x, 0.0); }, "where");
}

TEST_CASE("any and all reduce over axes, with keepdims", "[api][numpy][reduce]") {
  Array b = array<bool>({true, false, false, false, false, false}, {2, 3});
  CHECK(bools(any(b)) == std::vector<bool>{true});
  CHECK(bools(all(b)) == std::vector<bool>{false});
  CHECK(bools(any(b, {1})) == std::vector<bool>{true, false});
  CHECK(bools(any(b, {0})) == std::vector<bool>{true, false, false});
  CHECK(any(b, {1}, true).shape() == Shape{2, 1});
  CHECK(all(b, {0, 1}, true).shape() == Shape{1, 1});
  CHECK(any(b).dtype() == bool_);
  // Numbers: nonzero is true, NaN included; empty axes give the identities.
  Array x = array<float>({0, 2, NAN, 0, 0, 0}, {3, 2});
  CHECK(bools(any(x, {1})) == std::vector<bool>{true, true, false});
  CHECK(bools(all(x, {1})) == std::vector<bool>{false, false, false});
  CHECK(bools(all(array({1, -1, 3}))) == std::vector<bool>{true});
  CHECK(bools(any(zeros({0}))) == std::vector<bool>{false});
  CHECK(bools(all(zeros({0}))) == std::vector<bool>{true});
  check_error<ShapeError>([&] { any(b, {2}); }, "any");
  check_error<ShapeError>([&] { all(b, {1, -1}); }, "all");
  // vmap equals a loop.
  Array rows = vmap([](const Array& r) { return all(r > 0.0); })(matrix());
  for (int64_t i = 0; i < 3; ++i) CHECK(bools(rows[i]) == bools(all(matrix()[i] > 0.0)));
}

TEST_CASE("var and std: mean squared deviation with ddof", "[api][numpy][reduce]") {
  Array m = matrix();
  std::vector<double> v = d(m);
  // Row variances by a loop.
  for (int ddof : {0, 1}) {
    std::vector<double> want;
    for (int r = 0; r < 3; ++r) {
      double mean = 0, ss = 0;
      for (int c = 0; c < 4; ++c) mean += v[r * 4 + c] / 4;
      for (int c = 0; c < 4; ++c) ss += (v[r * 4 + c] - mean) * (v[r * 4 + c] - mean);
      want.push_back(ss / (4 - ddof));
    }
    check_close(var(m, {1}, false, ddof), want);
    std::vector<double> sd;
    for (double w : want) sd.push_back(std::sqrt(w));
    check_close(graft::std(m, {-1}, false, ddof), sd);
  }
  check_close(var(array<double>({1, 2, 3, 4})), {1.25});
  check_close(graft::std(array<double>({1, 2, 3, 4}), {}, false, 1), {std::sqrt(5.0 / 3)});
  CHECK(var(m, {0}, true).shape() == Shape{1, 4});
  CHECK(var(array({1, 2, 3})).dtype() == f32);
  check_close(var(array({1, 2, 3})), {2.0 / 3}, 1e-6);
  // Stable for a large offset (E[x^2] - E[x]^2 would lose everything in f32).
  check_close(var(array<float>({1e4f + 1, 1e4f + 2, 1e4f + 3})), {2.0 / 3}, 1e-3);
  CHECK(std::isnan(d(var(array<double>({1.0}), {}, false, 1))[0]));  // 0 / (N - ddof = 0), as NumPy
  CHECK_NOTHROW(testing::check_grads([](const Array& a) { return var(a, {1}, false, 1); }, std::make_tuple(m)));
  CHECK_NOTHROW(testing::check_grads([](const Array& a) { return graft::std(a, {0}, true); }, std::make_tuple(m)));
  Array rows = vmap([](const Array& r) { return graft::std(r); })(m);
  for (int64_t i = 0; i < 3; ++i) check_close(rows[i], graft::std(m[i]));
  check_error<DTypeError>([&] { var(array({true})); }, "var");
  check_error<ShapeError>([&] { graft::std(m, {3}); }, "std");
}

TEST_CASE("outer: products of the flattened operands", "[api][numpy][linalg]") {
  Array o = outer(array<double>({1, 2}), array<double>({3, 4, 5}));
  CHECK(o.shape() == Shape{2, 3});
  check_close(o, {3, 4, 5, 6, 8, 10});
  CHECK(outer(reshape(arange(4), {2, 2}), array({1, 10})).shape() == Shape{4, 2});
  CHECK(i32s(outer(reshape(arange(4), {2, 2}), array({1, 10}))) == std::vector<int32_t>{0, 0, 1, 10, 2, 20, 3, 30});
  CHECK_NOTHROW(testing::check_grads([](const Array& a, const Array& b) { return outer(a, b); },
                                     std::make_tuple(array<double>({0.5, -1}), array<double>({2, 3, -4}))));
}

TEST_CASE("split: equal sections and cut points", "[api][numpy][shape]") {
  Array x = reshape(astype(arange(12), f64), {3, 4});
  std::vector<Array> cols = split(x, 2, 1);
  REQUIRE(cols.size() == 2);
  check_close(cols[0], {0, 1, 4, 5, 8, 9});
  check_close(cols[1], {2, 3, 6, 7, 10, 11});
  std::vector<Array> rows = split(x, 3);
  REQUIRE(rows.size() == 3);
  check_close(rows[2], {8, 9, 10, 11});
  std::vector<Array> cut = split(arange(7), std::vector<int64_t>{2, 5});
  REQUIRE(cut.size() == 3);
  CHECK(i32s(cut[0]) == std::vector<int32_t>{0, 1});
  CHECK(i32s(cut[1]) == std::vector<int32_t>{2, 3, 4});
  CHECK(i32s(cut[2]) == std::vector<int32_t>{5, 6});
  // NumPy's clamping: decreasing or out-of-range cut points give empty pieces; negatives count from the end.
  std::vector<Array> odd = split(arange(5), std::vector<int64_t>{3, 1, 9});
  REQUIRE(odd.size() == 4);
  CHECK(i32s(odd[0]) == std::vector<int32_t>{0, 1, 2});
  CHECK(odd[1].shape() == Shape{0});
  CHECK(i32s(odd[2]) == std::vector<int32_t>{1, 2, 3, 4});
  CHECK(odd[3].shape() == Shape{0});
  CHECK(i32s(split(arange(5), std::vector<int64_t>{-2})[1]) == std::vector<int32_t>{3, 4});
  // The pieces of a split differentiate back to the slices they came from.
  CHECK_NOTHROW(testing::check_grads(
      [](const Array& a) {
        std::vector<Array> p = split(a, std::vector<int64_t>{1, 3}, 1);
        return p[0] * 2.0 + sum(p[1] * p[1], {1}, true) - sum(p[2], {1}, true);
      },
      std::make_tuple(matrix())));
  check_error<ShapeError>([&] { split(x, 3, 1); }, "split");
  check_error<ShapeError>([&] { split(x, 0); }, "split");
  check_error<ShapeError>([&] { split(scalar(1.0), 1); }, "split");
  check_error<ShapeError>([&] { split(x, std::vector<int64_t>{1}, 2); }, "split");
}

TEST_CASE("tile and repeat: NumPy's layouts", "[api][numpy][shape]") {
  Array v = array({1, 2});
  CHECK(i32s(tile(v, {3})) == std::vector<int32_t>{1, 2, 1, 2, 1, 2});
  Array t = tile(v, {2, 2});
  CHECK(t.shape() == Shape{2, 4});
  CHECK(i32s(t) == std::vector<int32_t>{1, 2, 1, 2, 1, 2, 1, 2});
  Array m = array<int32_t>({1, 2, 3, 4}, {2, 2});
  CHECK(i32s(tile(m, {2})) == std::vector<int32_t>{1, 2, 1, 2, 3, 4, 3, 4});
  CHECK(i32s(tile(m, {2, 1})) == std::vector<int32_t>{1, 2, 3, 4, 1, 2, 3, 4});
  CHECK(tile(m, {0, 3}).shape() == Shape{0, 6});
  CHECK(tile(scalar(5.0), {}).shape() == Shape{});
  CHECK(i32s(repeat(m, 2, 0)) == std::vector<int32_t>{1, 2, 1, 2, 3, 4, 3, 4});
  CHECK(i32s(repeat(m, 2, -1)) == std::vector<int32_t>{1, 1, 2, 2, 3, 3, 4, 4});
  CHECK(i32s(repeat(m, 3)) == std::vector<int32_t>{1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4});
  CHECK(repeat(m, 0, 1).shape() == Shape{2, 0});
  CHECK(i32s(repeat(scalar(7, i32), 2)) == std::vector<int32_t>{7, 7});
  // d/dx of sum(w * tile(x)) adds up w over the copies.
  Array x = array<double>({1, 2});
  check_close(grad([](const Array& a) { return sum(tile(a, {3}) * array<double>({1, 2, 3, 4, 5, 6})); })(x), {9, 12});
  check_close(grad([](const Array& a) { return sum(repeat(a, 2, 0) * array<double>({1, 2, 3, 4})); })(x), {3, 7});
  CHECK_NOTHROW(testing::check_grads([](const Array& a) { return tile(a, {2, 1, 2}); }, std::make_tuple(matrix())));
  CHECK_NOTHROW(testing::check_grads([](const Array& a) { return repeat(a * a, 3, 1); }, std::make_tuple(matrix())));
  // vmap equals a loop.
  Array tiled = vmap([](const Array& r) { return tile(r, {2, 2}); })(matrix());
  Array repeated = vmap([](const Array& r) { return repeat(r, 2, 0); })(matrix());
  for (int64_t i = 0; i < 3; ++i) {
    check_close(tiled[i], tile(matrix()[i], {2, 2}));
    check_close(repeated[i], repeat(matrix()[i], 2, 0));
  }
  check_error<ShapeError>([&] { tile(m, {2, -1}); }, "tile");
  check_error<ShapeError>([&] { repeat(m, -1, 0); }, "repeat");
  check_error<ShapeError>([&] { repeat(m, 2, 2); }, "repeat");
}

TEST_CASE("arange(start, stop, step): NumPy's lengths, dtypes and signs", "[api][numpy][creation]") {
  CHECK(arange(2, 6).dtype() == i32);
  CHECK(i32s(arange(2, 6)) == std::vector<int32_t>{2, 3, 4, 5});
  CHECK(i32s(arange(5, 0, -1)) == std::vector<int32_t>{5, 4, 3, 2, 1});
  CHECK(i32s(arange(10, 0, -3)) == std::vector<int32_t>{10, 7, 4, 1});
  CHECK(i32s(arange(-3, 3, 2)) == std::vector<int32_t>{-3, -1, 1});
  CHECK(arange(5, 0).shape() == Shape{0});
  CHECK(arange(0, 5, -1).shape() == Shape{0});
  // A floating argument gives f32, whatever its value; the length is ceil((stop - start) / step).
  CHECK(arange(0.0, 3).dtype() == f32);
  check_close(arange(0.0, 1.0, 0.25), {0, 0.25, 0.5, 0.75});
  CHECK(arange(0, 1, 0.1).shape() == Shape{10});
  check_close(arange(0, 1, 0.1), {0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9}, 1e-7);
  check_close(arange(1, 2.5), {1, 2});
  check_close(arange(1.0, -1.0, -0.5), {1, 0.5, 0, -0.5});
  // An explicit dtype.
  CHECK(arange(0, 1, 0.1, f64).dtype() == f64);
  check_close(arange(0, 1, 0.1, f64), {0, 0.1, 0.2, 0.30000000000000004, 0.4, 0.5, 0.6000000000000001,
                                       0.7000000000000001, 0.8, 0.9}, 1e-16);
  CHECK(arange(0, 4, f64).dtype() == f64);
  CHECK(arange(0, 4, i64).to_vector<int64_t>() == std::vector<int64_t>{0, 1, 2, 3});
  CHECK(arange(5, 0, -2, u32).to_vector<uint32_t>() == std::vector<uint32_t>{5, 3, 1});
  // Under jit it is a constant of the trace.
  check_close(jit([](const Array& a) { return a + arange(0.0, 2.0, 0.5); })(zeros({4})), {0, 0.5, 1, 1.5});
  check_error<ShapeError>([] { arange(0, 5, 0); }, "arange");
  check_error<ShapeError>([] { arange(0.0, INFINITY); }, "arange");
  check_error<DTypeError>([] { arange(0, 2, 1, bool_); }, "arange");
}

TEST_CASE("cumsum with reverse", "[api][numpy][reduce]") {
  Array x = array<double>({1, 2, 3, 4, 5, 6}, {2, 3});
  check_close(cumsum(x, 1, true), {6, 5, 3, 15, 11, 6});
  check_close(cumsum(x, 0, true), {5, 7, 9, 4, 5, 6});
  check_close(cumsum(x, -1), {1, 3, 6, 4, 9, 15});
  CHECK(i32s(cumsum(array({true, true, false}), 0, true)) == std::vector<int32_t>{2, 1, 0});
  // d/dx_j sum_i w_i * (sum_{k>=i} x_k) = sum_{i<=j} w_i.
  check_close(grad([](const Array& a) { return sum(cumsum(a, 0, true) * array<double>({1, 10, 100})); })(
                  array<double>({1, 2, 3})),
              {1, 11, 111});
  CHECK_NOTHROW(testing::check_grads([](const Array& a) { return cumsum(a * a, 1, true); }, std::make_tuple(matrix())));
  Array rows = vmap([](const Array& r) { return cumsum(r, 0, true); })(matrix());
  for (int64_t i = 0; i < 3; ++i) check_close(rows[i], cumsum(matrix()[i], 0, true));
  check_error<ShapeError>([&] { cumsum(x, 2, true); }, "cumsum");
}

TEST_CASE("einsum: a letter repeated within an operand takes the diagonal", "[api][numpy][einsum]") {
  Array a = reshape(astype(arange(9), f64), {3, 3});  // [[0,1,2],[3,4,5],[6,7,8]]
  check_close(einsum("ii->i", {a}), {0, 4, 8});
  check_close(einsum("ii->", {a}), {12});
  check_close(einsum("ii", {a}), {12});  // implicit output: the trace, as NumPy
  // iij->j: sum_i b[i, i, j].
  Array b = reshape(astype(arange(18), f64), {3, 3, 2});
  std::vector<double> bv = d(b), want(2, 0);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j) want[j] += bv[(i * 3 + i) * 2 + j];
  check_close(einsum("iij->j", {b}), want);
  // The repeated pair need not lead or be adjacent: c[j, i, k] = b[i, k, j], so c's jii is b's iij.
  Array c = transpose(b, {2, 0, 1});  // c[j, i, k] = b[i, k, j]
  std::vector<double> cd;
  for (int j = 0; j < 2; ++j)
    for (int i = 0; i < 3; ++i) cd.push_back(bv[(i * 3 + i) * 2 + j]);
  check_close(einsum("jii->ji", {c}), cd);
  check_close(einsum("iji->ij", {transpose(b, {0, 2, 1})}), einsum("iij->ij", {b}));
  // With other operands: diag(a) * v, and trace(a) * v.
  Array v = array<double>({1, 10, 100});
  check_close(einsum("ii,i->i", {a, v}), {0, 40, 800});
  check_close(einsum("i,jj->i", {v, a}), {12, 120, 1200});
  check_close(einsum("ij,jj->i", {a, a}), {0 * 0 + 1 * 4 + 2 * 8, 3 * 0 + 4 * 4 + 5 * 8, 6 * 0 + 7 * 4 + 8 * 8});
  // Three times the same letter.
  Array cube = reshape(astype(arange(8), f64), {2, 2, 2});
  check_close(einsum("iii->i", {cube}), {0, 7});
  // Derivatives: d trace(a) = I; and finite differences for a mixed spec.
  check_close(grad([](const Array& m) { return einsum("ii->", {m}); })(a), {1, 0, 0, 0, 1, 0, 0, 0, 1});
  CHECK_NOTHROW(testing::check_grads([](const Array& m, const Array& w) { return einsum("iij,j->i", {m, w}); },
                                     std::make_tuple(b * 0.1, array<double>({0.5, -2}))));
  // vmap equals a loop.
  Array stacked = stack({a, a * 2.0, a - 1.0});
  Array diags = vmap([](const Array& m) { return einsum("ii->i", {m}); })(stacked);
  for (int64_t i = 0; i < 3; ++i) check_close(diags[i], einsum("ii->i", {stacked[i]}));
  check_error<ShapeError>([] { einsum("ii->i", {zeros({2, 3})}); }, "einsum");
}
