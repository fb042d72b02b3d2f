// Bitwise ops, shifts, population_count and clz in the API and as
// operators, with JAX's results (lax.shift_left, shift_right_arithmetic,
// shift_right_logical, population_count, clz, computed with JAX 0.10.2):
// out-of-range and negative shift amounts, unsigned arithmetic shifts, and
// the same values compiled and vmapped. The JAX corpus (corpus/cases/shift_*,
// population_count, clz) checks every primitive again on i32, i64 and u32.
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "graft/graft.h"
#include "interpreter/kernels/scalar_ops.h"

using namespace graft;
using Catch::Matchers::Contains;

TEST_CASE("bitwise: shifts give JAX's results, out-of-range amounts included", "[api][bitwise]") {
  const Array x = array(std::vector<int32_t>{-8, 8, -1}, {3});
  CHECK((x >> array(std::vector<int32_t>{1, 1, 1}, {3})).to_vector<int32_t>() == std::vector<int32_t>{-4, 4, -1});
  // A negative amount is out of range (read as unsigned): the sign for >>, 0 for <<.
  CHECK(right_shift(x, array(std::vector<int32_t>{-1, -1, -1}, {3})).to_vector<int32_t>() ==
        std::vector<int32_t>{-1, 0, -1});
  CHECK(left_shift(x, array(std::vector<int32_t>{-1, 2, 31}, {3})).to_vector<int32_t>() ==
        std::vector<int32_t>{0, 32, INT32_MIN});
  CHECK((x << 33).to_vector<int32_t>() == std::vector<int32_t>{0, 0, 0});
  CHECK((x << 2).to_vector<int32_t>() == std::vector<int32_t>{-32, 32, -4});
  CHECK((x >> 40).to_vector<int32_t>() == std::vector<int32_t>{-1, 0, -1});
  CHECK((1 << array(std::vector<int32_t>{0, 4, 32}, {3})).to_vector<int32_t>() == std::vector<int32_t>{1, 16, 0});

  // NumPy's >> on unsigned integers is logical.
  const Array u = array(std::vector<uint32_t>{0x80000000u, 0xF0000000u, 5}, {3});
  CHECK((u >> 1).to_vector<uint32_t>() == std::vector<uint32_t>{1073741824u, 2013265920u, 2});
  CHECK_THAT(make_graph([](const Array& a) { return a >> 1; })(u).to_text(), Contains("shift_right_logical"));
  CHECK_THAT(make_graph([](const Array& a) { return a >> 1; })(x).to_text(), Contains("shift_right_arithmetic"));
  // lax.shift_right_arithmetic reads an unsigned top bit as the sign (the primitive, as JAX's).
  CHECK(gcg_shift_right_arithmetic<uint32_t>(0x80000000u, 1) == 3221225472u);
  CHECK(gcg_shift_right_arithmetic<uint32_t>(0xF0000000u, 40) == 4294967295u);
  CHECK(gcg_shift_right_arithmetic<uint32_t>(5, 1) == 2);
  CHECK(gcg_shift_right_logical<int32_t>(-8, 1) == 2147483644);
  CHECK(gcg_shift_right_logical<int64_t>(-1, 64) == 0);
}

TEST_CASE("bitwise: population_count, clz and the bitwise operators", "[api][bitwise]") {
  const Array x = array(std::vector<int32_t>{-8, 8, -1, 0, 1, INT32_MAX}, {6});
  CHECK(population_count(x).to_vector<int32_t>() == std::vector<int32_t>{29, 1, 32, 0, 1, 31});
  CHECK(clz(x).to_vector<int32_t>() == std::vector<int32_t>{0, 28, 0, 32, 31, 1});
  const Array w = array(std::vector<int64_t>{0, -1, int64_t{1} << 40, 7}, {4});
  CHECK(population_count(w).to_vector<int64_t>() == std::vector<int64_t>{0, 64, 1, 3});
  CHECK(clz(w).to_vector<int64_t>() == std::vector<int64_t>{64, 0, 23, 61});

  const Array a = array(std::vector<int32_t>{12, -1, 5}, {3}), b = array(std::vector<int32_t>{10, 3, -6}, {3});
  CHECK((a & b).to_vector<int32_t>() == std::vector<int32_t>{8, 3, 0});
  CHECK((a | b).to_vector<int32_t>() == std::vector<int32_t>{14, -1, -1});
  CHECK((a ^ b).to_vector<int32_t>() == std::vector<int32_t>{6, -4, -1});
  CHECK((~a).to_vector<int32_t>() == std::vector<int32_t>{-13, 0, -6});
  CHECK((a & 6).to_vector<int32_t>() == std::vector<int32_t>{4, 6, 4});
  const Array p = array(std::vector<bool>{true, false, true}, {3}),
              q = array(std::vector<bool>{true, true, false}, {3});
  CHECK((p ^ q).to_vector<bool>() == std::vector<bool>{false, true, true});
  CHECK((~p).to_vector<bool>() == std::vector<bool>{false, true, false});

  // Floats are refused, naming the op and the dtype.
  const Array f = array(std::vector<float>{1, 2}, {2});
  CHECK_THROWS_WITH(f << f, Contains("shift_left") && Contains("integer dtype") && Contains("f32"));
  CHECK_THROWS_AS(population_count(f), DTypeError);
  CHECK_THROWS_WITH(bitwise_and(f, f), Contains("integer or bool"));
}

TEST_CASE("bitwise: compiled and vmapped shifts equal the eager ones", "[api][bitwise]") {
  const Array x = array(std::vector<int32_t>{-8, 8, -1, 5, 123456, -7}, {2, 3});
  const Array s = array(std::vector<int32_t>{1, 33, -1, 0, 31, 2}, {2, 3});
  auto f = [](const Array& v, const Array& k) {
    return std::vector<Array>{v << k, v >> k, population_count(v) + clz(v), (v & k) ^ ~(v | k)};
  };
  const std::vector<Array> eager = f(x, s);
  for (Backend backend : {Backend::interpreter, Backend::automatic}) {
    const std::vector<Array> compiled = jit(f, JitOptions{.backend = backend, .wait_for_compile = true})(x, s);
    for (size_t i = 0; i < eager.size(); ++i) CHECK(compiled[i].to_vector<int32_t>() == eager[i].to_vector<int32_t>());
  }
  const std::vector<Array> mapped = vmap(f)(x, s);
  for (size_t i = 0; i < eager.size(); ++i) CHECK(mapped[i].to_vector<int32_t>() == eager[i].to_vector<int32_t>());
}

TEST_CASE("bitcast: the bits read as another dtype, as x.view(dtype)", "[api][bitwise]") {
  const Array f = array(std::vector<float>{1.0f, -2.5f, 0.0f, -0.0f}, {4});
  CHECK(bitcast(f, DType::u32).to_vector<uint32_t>() ==
        std::vector<uint32_t>{0x3f800000u, 0xc0200000u, 0u, 0x80000000u});
  CHECK(bitcast(f, DType::i32).to_vector<int32_t>()[1] == static_cast<int32_t>(0xc0200000u));
  // a NaN's payload survives the round trip
  const Array nan_bits = array(std::vector<uint32_t>{0x7fc00001u, 0xffbfffffu}, {2});
  CHECK(bitcast(bitcast(nan_bits, DType::f32), DType::u32).to_vector<uint32_t>() == nan_bits.to_vector<uint32_t>());
  const Array d = array(std::vector<double>{1.0, -0.0}, {2});
  CHECK(bitcast(d, DType::i64).to_vector<int64_t>() ==
        std::vector<int64_t>{0x3ff0000000000000LL, static_cast<int64_t>(0x8000000000000000ULL)});
  CHECK(bitcast(bitcast(d, DType::i64), DType::f64).to_vector<double>() == d.to_vector<double>());
  // compiled code computes the same bits, fused with its neighbours
  auto g = [](const Array& x) { return bitcast(x * 2.0f, DType::u32) >> 23; };
  for (Backend b : {Backend::interpreter, Backend::cpu})
    CHECK(jit(g, JitOptions{.backend = b, .wait_for_compile = true})(f).to_vector<uint32_t>() ==
          std::vector<uint32_t>{128u, 385u, 0u, 256u});
  CHECK(vmap([](const Array& x) { return bitcast(x, DType::i32); })(reshape(f, {2, 2})).to_vector<int32_t>() ==
        bitcast(f, DType::i32).to_vector<int32_t>());
  // Across widths (tests/dtypes): two f32 make one f64; three cannot.
  CHECK(bitcast(f, DType::f64).shape() == Shape{2});
  CHECK_THROWS_WITH(bitcast(array(std::vector<float>{1, 2, 3}, {3}), DType::f64),
                    Catch::Contains("bitcast") && Catch::Contains("multiple of 2"));
  CHECK_THROWS_AS(bitcast(f, DType::bool_), DTypeError);
  CHECK(grad([](const Array& x) { return sum(astype(bitcast(x, DType::i32), DType::f32)); })(f).to_vector<float>() ==
        std::vector<float>{0, 0, 0, 0});
}

TEST_CASE("bitwise: the functions take a C++ number for either operand, weakly typed", "[api][bitwise]") {
  const Array x = array(std::vector<uint32_t>{0xf0u, 0x0fu, 0xffffffffu}, {3});
  CHECK(bitwise_and(x, 0x3c).to_vector<uint32_t>() == std::vector<uint32_t>{0x30u, 0x0cu, 0x3cu});
  CHECK(bitwise_and(x, 0x3c).dtype() == DType::u32);
  CHECK(bitwise_or(0x100, x).to_vector<uint32_t>() == std::vector<uint32_t>{0x1f0u, 0x10fu, 0xffffffffu});
  CHECK(bitwise_xor(x, 1).to_vector<uint32_t>() == std::vector<uint32_t>{0xf1u, 0x0eu, 0xfffffffeu});
  CHECK(left_shift(x, 4).to_vector<uint32_t>() == std::vector<uint32_t>{0xf00u, 0xf0u, 0xfffffff0u});
  CHECK(right_shift(x, 4).to_vector<uint32_t>() ==
        std::vector<uint32_t>{0x0fu, 0x0u, 0x0fffffffu});                                       // logical: unsigned
  CHECK(right_shift(array({-16, 16}), 2).to_vector<int32_t>() == std::vector<int32_t>{-4, 4});  // arithmetic: signed
  CHECK(left_shift(1, array({0, 3, 31})).to_vector<int32_t>() == std::vector<int32_t>{1, 8, INT32_MIN});
  CHECK(right_shift(x, 32).to_vector<uint32_t>() == std::vector<uint32_t>{0, 0, 0});  // JAX's out-of-range result
  CHECK_THROWS_AS(bitwise_and(array({1.0f}), 1), DTypeError);
}
