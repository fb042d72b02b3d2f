// Inputs the fuzzers (fuzz/, scripts/fuzz.sh) found to misbehave, reduced to
// the call that did, with the behaviour graft now has.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>

#include "graft/graft.h"

using namespace graft;

TEST_CASE("a C++ number past an integer dtype's range saturates, as astype does", "[fuzz_findings]") {
  // ops fuzzer: full(shape, 1e300, u32) converted the double with static_cast (undefined behaviour).
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(full({2}, 1e300, DType::u32).to_vector<uint32_t>() == std::vector<uint32_t>{UINT32_MAX, UINT32_MAX});
  CHECK(full({1}, -1e300, DType::i32).item<int32_t>() == INT32_MIN);
  CHECK(full({1}, nan, DType::i64).item<int64_t>() == 0);
  CHECK(scalar(-5.0, DType::u32).item<uint32_t>() == 0u);
  CHECK(array<double>({1e300, -1e300, nan, 2.9}, {4}).to_vector<double>().size() == 4);
  // The same values through astype: one rule for both.
  const Array big = array<double>({1e300, -1e300, nan, 2.9}, {4});
  CHECK(astype(big, DType::i32).to_vector<int32_t>() == std::vector<int32_t>{INT32_MAX, INT32_MIN, 0, 2});
  CHECK(astype(big, DType::u32).to_vector<uint32_t>() == std::vector<uint32_t>{UINT32_MAX, 0u, 0u, 2u});
}

TEST_CASE("integer sums and products wrap in every kernel, as elementwise add does", "[fuzz_findings]") {
  // ops fuzzer: scatter_add of i64 overflowed a signed add (undefined behaviour); reductions,
  // cumulative ops and integer dot_general added and multiplied the same way.
  const int64_t big = INT64_MAX - 4;
  const Array x = array<int64_t>({big, INT64_MAX}, {2});
  const int64_t wrapped = static_cast<int64_t>(static_cast<uint64_t>(big) + static_cast<uint64_t>(INT64_MAX));
  CHECK((x[0] + x[1]).item<int64_t>() == wrapped);
  CHECK(sum(x).item<int64_t>() == wrapped);
  CHECK(cumsum(x, 0).to_vector<int64_t>() == std::vector<int64_t>{big, wrapped});
  CHECK(scatter_add(array<int64_t>({big}, {1}), array<int32_t>({0}, {1}), array<int64_t>({INT64_MAX}, {1})).item<int64_t>() ==
        wrapped);
  CHECK(dot(x, array<int64_t>({1, 1}, {2})).item<int64_t>() == wrapped);
  const Array m = array<int32_t>({INT32_MAX, 3}, {2});
  const int32_t prod_wrapped = static_cast<int32_t>(static_cast<uint32_t>(INT32_MAX) * 3u);
  CHECK(prod(m).item<int32_t>() == prod_wrapped);
  CHECK(cumprod(m, 0).to_vector<int32_t>() == std::vector<int32_t>{INT32_MAX, prod_wrapped});
  CHECK(matmul(reshape(m, {1, 2}), array<int32_t>({1, 1}, {2, 1})).item<int32_t>() ==
        static_cast<int32_t>(static_cast<uint32_t>(INT32_MAX) + 3u));
}

TEST_CASE("take from an empty axis is an error unless the result is empty too", "[fuzz_findings]") {
  // ops fuzzer: gather clamped indices into [0, -1] and read before the operand.
  const Array x = zeros({0, 3});
  CHECK_THROWS_AS(take(x, array<int32_t>({0}, {1}), 0), ShapeError);
  CHECK_THROWS_WITH(take(x, array<int32_t>({0}, {1}), 0), Catch::Contains("which is empty"));
  CHECK(take(x, zeros({0}, DType::i32), 0).shape() == Shape{0, 3});
  CHECK_THROWS_AS(take(zeros({2, 0}), array<int32_t>({1, 5}, {2}), 1), ShapeError);
  CHECK(take(zeros({0, 2}), array<int32_t>({1, 5}, {2}), 1).shape() == Shape{0, 2});  // nothing to read
}

TEST_CASE("an empty array whose other axes multiply past int64 runs layout ops and dot", "[fuzz_findings]") {
  // ops fuzzer: f32[0, 4, 4, ... 4] (32 fours, made by stacking) holds nothing, but its row-major
  // strides overflowed int64 in the kernels (undefined behaviour, seen under UBSan), and its
  // transpose, with the 0 last, counted "too many" elements (the product overflowed before the 0).
  Array x = zeros({0});
  for (int k = 0; k < 32; ++k) x = stack({x, x, x, x}, 1);
  REQUIRE(x.ndim() == 33);
  CHECK(x.size() == 0);
  CHECK(transpose(x).shape().back() == 0);
  CHECK(sum(x, {1}).ndim() == 32);
  CHECK(flip(x, {2}).size() == 0);
  CHECK(matmul(x, zeros({4, 3})).shape().back() == 3);
  CHECK((x + x).size() == 0);
  // The element count no longer depends on where the 0 is: both orders are empty arrays.
  const int64_t big = int64_t{1} << 40;  // the largest axis graft makes (ir::kMaxDim)
  CHECK(zeros({0, big, big}).size() == 0);
  CHECK(zeros({big, big, 0}).size() == 0);
  CHECK_THROWS_AS(zeros({big, big}), Error);  // 2^80 elements: too many, not empty
  // ops fuzzer: repeat of an empty array by 2^31 - 1 merged axes whose stride times size overflowed.
  CHECK(repeat(zeros({100, 0}), 2147483647, 0).shape() == Shape{100 * int64_t{2147483647}, 0});
  CHECK(repeat(zeros({100, 0}), 2147483647, 1).shape() == Shape{100, 0});
}

TEST_CASE("fuzz finding: a result of 2^62 elements is a ShapeError, not a wrapped byte count", "[fuzz_findings]") {
  // broadcast_to(i32 scalar, [2^31, 2^31]): 2^62 elements fit int64, but 2^64 bytes wrapped to a
  // zero-byte buffer that the kernel then wrote (ops fuzzer, ASan use-after-poison).
  const int64_t big = int64_t{1} << 31;
  CHECK_THROWS_AS(broadcast_to(scalar(7, i32), {big, big}), ShapeError);
  CHECK_THROWS_WITH(broadcast_to(scalar(7, i32), {big, big}),
                    Catch::Contains("broadcast_in_dim: shape [2147483648,2147483648] has too many elements"));
  CHECK_THROWS(zeros({big, big}, i32));
  CHECK_THROWS(full({big, big, 4}, 1.0));
  // Inside a trace too.
  CHECK_THROWS_AS(make_graph([&](const Array& x) { return broadcast_to(x, {big, big}); })(scalar(1.0)), ShapeError);
  // The largest count allowed still builds a graph (nothing is allocated).
  const Graph g = make_graph([&](const Array& x) { return broadcast_to(x, {int64_t{1} << 30, int64_t{1} << 30}); })(scalar(1.0));
  CHECK(g.num_nodes() >= 1);
}

TEST_CASE("differential finding: a product with nothing to contract keeps the sign of zero", "[fuzz_findings]") {
  // rsqrt(dot_general(x, x) with no contracting axes): op by op the kernel's GEMM computed
  // 0 + 0 * -3.5 = +0 (rsqrt: +inf); batched under vmap it was -0 (-inf), as IEEE and JAX say.
  const Array x = array({0.0f, -3.5f, 2.0f});
  auto f = [](const Array& v) { return dot_general(v, v, {{}, {}}, {{}, {}}); };
  const std::vector<float> want = {0.0f, -0.0f, 0.0f, -0.0f, 12.25f, -7.0f, 0.0f, -7.0f, 4.0f};
  for (const Array& got : {f(x), jit(f)(x), vmap(f)(stack({x, x}))[1], outer(x, x), einsum("i,j->ij", {x, x})}) {
    const std::vector<float> v = got.to_vector<float>();
    REQUIRE(v.size() == want.size());
    for (size_t i = 0; i < v.size(); ++i) {
      INFO("element " << i);
      CHECK(v[i] == want[i]);
      CHECK(std::signbit(v[i]) == std::signbit(want[i]));
    }
  }
  // Batched, large enough for the parallel path and a BLAS-sized product.
  const Array big = reshape(astype(arange(2 * 300), DType::f32) - 150.0f, {2, 300});
  const Array o = dot_general(big, big, {{}, {}}, {{0}, {0}});  // [2, 300, 300], no contraction
  CHECK(std::signbit(o[0][150][0].item<float>()));  // 0 * -150 = -0
  CHECK(o[1][10][20].item<float>() == 160.0f * 170.0f);
}
