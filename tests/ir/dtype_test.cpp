#include <catch2/catch.hpp>

#include "ir/dtype.h"

using namespace graft;
using namespace graft::ir;

TEST_CASE("dtype: names, sizes and kinds", "[ir][dtype]") {
  for (DType d : kAllDTypes) {
    auto back = dtype_from_name(dtype_name(d));
    REQUIRE(back.has_value());
    CHECK(*back == d);
  }
  CHECK(std::string(dtype_name(bool_)) == "bool");
  CHECK(std::string(dtype_name(bf16)) == "bf16");
  CHECK(std::string(dtype_name(c128)) == "c128");
  CHECK_FALSE(dtype_from_name("f8").has_value());
  CHECK(dtype_size(bool_) == 1);
  CHECK(dtype_size(u8) == 1);
  CHECK(dtype_size(bf16) == 2);
  CHECK(dtype_size(u32) == 4);
  CHECK(dtype_size(f64) == 8);
  CHECK(dtype_size(c64) == 8);
  CHECK(dtype_size(c128) == 16);
  CHECK(is_floating(f32));
  CHECK(is_floating(bf16));
  CHECK(is_half(f16));
  CHECK_FALSE(is_floating(c64));
  CHECK(is_inexact(c64));
  CHECK_FALSE(is_floating(i64));
  CHECK(is_integer(u32));
  CHECK(is_integer(i8));
  CHECK_FALSE(is_integer(bool_));
  CHECK_FALSE(is_signed_integer(u32));
  CHECK(is_unsigned_integer(u64));
  CHECK(real_dtype(c128) == f64);
  CHECK(complex_dtype(f32) == c64);
  CHECK(complex_dtype(bf16) == c64);
}

TEST_CASE("dtype: weak scalars yield to arrays of their kind", "[ir][dtype][promotion]") {
  const PromotionType weak_int{i32, true}, weak_float{f32, true}, weak_complex{c64, true};
  for (DType d : kAllDTypes) {
    INFO(dtype_name(d));
    // A C++ int keeps every array's dtype but bool's.
    if (d != bool_) CHECK(promote_types(PromotionType{d}, weak_int) == PromotionType{d});
    // A C++ double keeps an inexact array's dtype.
    if (is_inexact(d))
      CHECK(promote_types(weak_float, PromotionType{d}) == PromotionType{d});
    else
      CHECK(promote_types(weak_float, PromotionType{d}) == weak_float);
    if (is_complex(d)) CHECK(promote_types(PromotionType{d}, weak_complex) == PromotionType{d});
  }
  CHECK(promote_types(weak_int, weak_float) == weak_float);
  // A weak f64 (e.g. from a traced scalar) is still weak: it yields to f32 arrays.
  CHECK(promote_types(PromotionType{f64, true}, PromotionType{f32}) == PromotionType{f32, false});
  // bf16 and f16 meet at f32; f64 and c64 at c128.
  CHECK(ir::promote_types(bf16, f16) == f32);
  CHECK(ir::promote_types(f64, c64) == c128);
}
