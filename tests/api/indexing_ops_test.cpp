// Layout, indexing, sorting, the derived reductions and einsum, against
// values computed by hand or by loops in the test.
#include <catch2/catch.hpp>
#include <cmath>

#include "graft/graft.h"

using namespace graft;

namespace {
std::vector<float> f(const Array& a) { return a.to_vector<float>(); }
std::vector<int32_t> i(const Array& a) { return a.to_vector<int32_t>(); }
}  // namespace

TEST_CASE("shape ops: slice, pad, concatenate, stack, squeeze, flip", "[api][shape]") {
  Array x = reshape(astype(arange(12), f32), {3, 4});
  CHECK(f(slice(x, {1, 0}, {3, 4}, {1, 2})) == std::vector<float>{4, 6, 8, 10});
  CHECK(f(slice(x, {-1, -2}, {3, 4})) == std::vector<float>{10, 11});
  CHECK(slice(x, {2, 0}, {1, 4}).shape() == Shape{0, 4});  // empty, as NumPy
  CHECK(f(pad(array({1.0f, 2.0f}), {{1, 2}}, 9)) == std::vector<float>{9, 1, 2, 9, 9});
  CHECK(pad(x, {{0, 1}, {2, 0}}).shape() == Shape{4, 6});
  CHECK(f(concatenate({array({1.0f}), array({2.0f, 3.0f})})) == std::vector<float>{1, 2, 3});
  CHECK(concatenate({x, x}, -1).shape() == Shape{3, 8});
  CHECK(concatenate({array({1}), array({2.5f})}).dtype() == f32);
  CHECK(stack({array({1.0f, 2.0f}), array({3.0f, 4.0f})}, 1).shape() == Shape{2, 2});
  CHECK(f(stack({array({1.0f, 2.0f}), array({3.0f, 4.0f})}, 1)) == std::vector<float>{1, 3, 2, 4});
  CHECK(squeeze(zeros({1, 3, 1})).shape() == Shape{3});
  CHECK(squeeze(zeros({1, 3, 1}), {-1}).shape() == Shape{1, 3});
  CHECK(f(flip(x, {0, 1}))[0] == 11.0f);
  CHECK(f(flip(array({1.0f, 2.0f, 3.0f}), {0})) == std::vector<float>{3, 2, 1});
  CHECK_THROWS_AS(squeeze(zeros({2, 3}), {0}), ShapeError);
  CHECK_THROWS_AS(concatenate({x, zeros({2, 3})}), ShapeError);
  CHECK_THROWS_AS(stack({zeros({2}), zeros({3})}), ShapeError);
  CHECK_THROWS_AS(pad(x, {{1, 1}}), ShapeError);
}

TEST_CASE("indexing: dynamic_slice and dynamic_update_slice clamp like XLA", "[api][indexing]") {
  Array x = reshape(astype(arange(12), f32), {3, 4});
  CHECK(f(dynamic_slice(x, {scalar(1, i32), scalar(1, i32)}, {2, 2})) == std::vector<float>{5, 6, 9, 10});
  // Starts past the end are clamped so the window fits.
  CHECK(f(dynamic_slice(x, {scalar(5, i32), scalar(-3, i32)}, {1, 2})) == std::vector<float>{8, 9});
  Array u = dynamic_update_slice(x, full({1, 2}, -1), {scalar(2, i32), scalar(3, i32)});
  CHECK(f(u) == std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, -1, -1});
  CHECK_THROWS_AS(dynamic_slice(x, {scalar(0, i32)}, {1, 1}), ShapeError);
  CHECK_THROWS_AS(dynamic_slice(x, {scalar(0.0, f32), scalar(0, i32)}, {1, 1}), DTypeError);
  CHECK_THROWS_AS(dynamic_slice(x, {scalar(0, i32), scalar(0, i32)}, {4, 1}), ShapeError);
}

TEST_CASE("indexing: take and scatter_add", "[api][indexing]") {
  Array x = reshape(astype(arange(12), f32), {3, 4});
  CHECK(f(take(x, array({2, 0}))) == std::vector<float>{8, 9, 10, 11, 0, 1, 2, 3});
  CHECK(f(take(x, array({-1}), 1)) == std::vector<float>{3, 7, 11});
  Array idx2 = array<int>({0, 1, 1, 0}, {2, 2});
  CHECK(take(x, idx2, 1).shape() == Shape{3, 2, 2});
  CHECK(f(take(array({10.0f, 20.0f, 30.0f}), idx2)) == std::vector<float>{10, 20, 20, 10});
  CHECK(f(take(array({10.0f, 20.0f}), array({7}))) == std::vector<float>{20});  // clamped
  // Repeated indices accumulate; out-of-range ones are dropped.
  Array s = scatter_add(zeros({4}), array({1, 1, 3, 9}), array({1.0f, 2.0f, 5.0f, 100.0f}));
  CHECK(f(s) == std::vector<float>{0, 3, 0, 5});
  Array rows = scatter_add(zeros({2, 3}), array({1, 1}), ones({2, 3}), 0);
  CHECK(f(rows) == std::vector<float>{0, 0, 0, 2, 2, 2});
  Array cols = scatter_add(zeros({2, 3}), array({-1}), scalar(4.0), 1);  // broadcast update
  CHECK(f(cols) == std::vector<float>{0, 0, 4, 0, 0, 4});
  CHECK_THROWS_AS(take(x, array({0.5f})), DTypeError);
  CHECK_THROWS_AS(take(x, array({0}), 2), ShapeError);
}

TEST_CASE("sort, argsort, one_hot", "[api][sort]") {
  CHECK(f(sort(array<float>({3, NAN, -1, 2}))).size() == 4);
  std::vector<float> sorted = f(sort(array<float>({3, NAN, -1, 2})));
  CHECK(sorted[0] == -1.0f);
  CHECK(sorted[2] == 3.0f);
  CHECK(std::isnan(sorted[3]));  // NaN last, as NumPy
  Array m = array<float>({3, 1, 2, 9, 7, 8}, {2, 3});
  CHECK(f(sort(m)) == std::vector<float>{1, 2, 3, 7, 8, 9});
  CHECK(f(sort(m, 0)) == std::vector<float>{3, 1, 2, 9, 7, 8});
  CHECK(i(argsort(array({2, 1, 2, 0}))) == std::vector<int32_t>{3, 1, 0, 2});  // stable
  Array oh = one_hot(array({0, 2}), 3);
  CHECK(oh.shape() == Shape{2, 3});
  CHECK(f(oh) == std::vector<float>{1, 0, 0, 0, 0, 1});
  CHECK(f(one_hot(array({5}), 3)) == std::vector<float>{0, 0, 0});
}

TEST_CASE("reductions: argmax, argmin, logsumexp, softmax, log_softmax, cumsum", "[api][reduce]") {
  Array x = array<float>({1, 5, 5, 2, 0, -3}, {2, 3});
  CHECK(i(argmax(x, 1)) == std::vector<int32_t>{1, 0});  // first of ties
  CHECK(i(argmin(x, -1)) == std::vector<int32_t>{0, 2});
  CHECK(i(argmax(x, 0)) == std::vector<int32_t>{1, 0, 0});
  CHECK(i(argmax(array<float>({1, NAN, 3}), 0)) == std::vector<int32_t>{1});
  Array big = array<float>({1000, 1000});
  CHECK(logsumexp(big).item<float>() == Approx(1000 + std::log(2.0)));
  double want = std::log(std::exp(1.0) + std::exp(5.0) + std::exp(5.0));
  CHECK(f(logsumexp(x, {1}))[0] == Approx(want));
  CHECK(logsumexp(x, {1}, true).shape() == Shape{2, 1});
  std::vector<float> sm = f(softmax(x));
  CHECK(sm[0] + sm[1] + sm[2] == Approx(1.0));
  CHECK(sm[1] == Approx(std::exp(5.0) / (std::exp(1.0) + 2 * std::exp(5.0))));
  CHECK(f(log_softmax(x))[0] == Approx(1.0 - want));
  CHECK(f(cumsum(x, 1)) == std::vector<float>{1, 6, 11, 2, 2, -1});
  CHECK(f(cumsum(x, 0)) == std::vector<float>{1, 5, 5, 3, 5, 2});
  CHECK(i(cumsum(array({true, true, false}), 0)) == std::vector<int32_t>{1, 2, 2});
  CHECK_THROWS_AS(argmax(zeros({0}), 0), ShapeError);
}

TEST_CASE("einsum and dot against loops", "[api][linalg][einsum]") {
  std::vector<double> a(24), b(24);
  for (int k = 0; k < 24; ++k) a[k] = std::sin(k + 1.0);
  for (int k = 0; k < 24; ++k) b[k] = std::cos(k * 0.3);
  Array A = array(a, {2, 3, 4}), B = array(b, {2, 4, 3});  // batch 2
  // bij,bjk->bik
  Array C = einsum("bij,bjk->bik", {A, B});
  REQUIRE(C.shape() == Shape{2, 3, 3});
  std::vector<double> c = C.to_vector<double>();
  for (int n = 0; n < 2; ++n)
    for (int p = 0; p < 3; ++p)
      for (int q = 0; q < 3; ++q) {
        double s = 0;
        for (int j = 0; j < 4; ++j) s += a[n * 12 + p * 4 + j] * b[n * 12 + j * 3 + q];
        CHECK(c[n * 9 + p * 3 + q] == Approx(s));
      }
  // transposed output, sums, outer products, implicit output
  Array T = einsum("bij->jib", {A});
  CHECK(T.shape() == Shape{4, 3, 2});
  CHECK(T.to_vector<double>()[3 * 6 + 1 * 2 + 1] == a[1 * 12 + 1 * 4 + 3]);  // T[j=3,i=1,b=1] = A[b=1,i=1,j=3]
  CHECK(einsum("bij->", {A}).item<double>() == Approx(sum(A).item<double>()));
  CHECK(einsum("i,j->ij", {array({1.0, 2.0}), array({3.0, 4.0, 5.0})}).to_vector<double>() ==
        std::vector<double>{3, 4, 5, 6, 8, 10});
  CHECK(einsum("ij,jk", {array<double>({1, 2, 3, 4}, {2, 2}), eye(2)}).shape() == Shape{2, 2});
  CHECK(einsum("i,i->", {array({1.0, 2.0}), array({3.0, 4.0})}).item<double>() == 11.0);
  // three operands: ij,jk,kl->il equals matmul(matmul(..))
  Array M = array<double>({1, 2, 3, 4}, {2, 2});
  CHECK(einsum("ij,jk,kl->il", {M, M, M}).to_vector<double>() == matmul(matmul(M, M), M).to_vector<double>());
  CHECK(dot(array({1.0, 2.0}), array({3.0, 4.0})).item<double>() == 11.0);
  CHECK(dot(A, array(std::vector<double>(4, 1.0), {4})).shape() == Shape{2, 3});
  CHECK_THROWS_AS(einsum("ij,jk->ik", {A, B}), ShapeError);        // ranks do not match the terms
  CHECK_THROWS_AS(einsum("ij->iz", {M}), ShapeError);               // letter in no operand
  CHECK(einsum("ii->i", {M}).to_vector<double>() == std::vector<double>{1, 4});  // a diagonal (numpy_ops_test has more)
  CHECK_THROWS_AS(einsum("ii->i", {zeros({2, 3})}), ShapeError);  // a diagonal of a non-square pair
  CHECK_THROWS_AS(einsum("ij,jk->ik", {M, zeros({3, 2})}), ShapeError);  // size mismatch
  CHECK_THROWS_AS(einsum("i$->i", {M}), ShapeError);
}
