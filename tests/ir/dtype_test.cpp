#include <catch2/catch.hpp>

#include "ir/dtype.h"

using namespace graft;
using namespace graft::ir;

TEST_CASE("dtype: names, sizes and kinds", "[ir][dtype]") {
  for (DType d : {bool_, i32, i64, u32, f32, f64}) {
    auto back = dtype_from_name(dtype_name(d));
    REQUIRE(back.has_value());
    CHECK(*back == d);
  }
  CHECK(std::string(dtype_name(bool_)) == "bool");
  CHECK_FALSE(dtype_from_name("f16").has_value());
  CHECK(dtype_size(bool_) == 1);
  CHECK(dtype_size(u32) == 4);
  CHECK(dtype_size(f64) == 8);
  CHECK(is_floating(f32));
  CHECK_FALSE(is_floating(i64));
  CHECK(is_integer(u32));
  CHECK_FALSE(is_integer(bool_));
  CHECK_FALSE(is_signed_integer(u32));
}

TEST_CASE("dtype: promotion of strong types, cell by cell", "[ir][dtype][promotion]") {
  const DType order[] = {bool_, i32, i64, u32, f32, f64};
  // Row promoted with column, as JAX does (with x64) on graft's dtypes.
  const DType expected[6][6] = {
      /* bool */ {bool_, i32, i64, u32, f32, f64},
      /* i32  */ {i32, i32, i64, i64, f32, f64},
      /* i64  */ {i64, i64, i64, i64, f32, f64},
      /* u32  */ {u32, i64, i64, u32, f32, f64},
      /* f32  */ {f32, f32, f32, f32, f32, f64},
      /* f64  */ {f64, f64, f64, f64, f64, f64},
  };
  for (int r = 0; r < 6; ++r)
    for (int c = 0; c < 6; ++c) {
      INFO(dtype_name(order[r]) << " + " << dtype_name(order[c]));
      CHECK(promote_types(order[r], order[c]) == expected[r][c]);
      PromotionType p = promote_types(PromotionType{order[r]}, PromotionType{order[c]});
      CHECK_FALSE(p.weak);
    }
}

TEST_CASE("dtype: promotion with weak scalars, cell by cell", "[ir][dtype][promotion]") {
  const PromotionType weak_int{i32, true}, weak_float{f32, true};
  const DType order[] = {bool_, i32, i64, u32, f32, f64};
  // A C++ int keeps the array's dtype unless the array is bool.
  const PromotionType with_int[6] = {{i32, true}, {i32, false}, {i64, false}, {u32, false}, {f32, false}, {f64, false}};
  // A C++ double keeps a float array's dtype; with ints or bools it gives the weak default float.
  const PromotionType with_float[6] = {{f32, true}, {f32, true}, {f32, true}, {f32, true}, {f32, false}, {f64, false}};
  for (int i = 0; i < 6; ++i) {
    INFO(dtype_name(order[i]));
    CHECK(promote_types(PromotionType{order[i]}, weak_int) == with_int[i]);
    CHECK(promote_types(weak_int, PromotionType{order[i]}) == with_int[i]);
    CHECK(promote_types(PromotionType{order[i]}, weak_float) == with_float[i]);
    CHECK(promote_types(weak_float, PromotionType{order[i]}) == with_float[i]);
  }
  CHECK(promote_types(weak_int, weak_int) == weak_int);
  CHECK(promote_types(weak_int, weak_float) == weak_float);
  CHECK(promote_types(weak_float, weak_float) == weak_float);
  // A weak f64 (e.g. from a traced scalar) is still weak: it yields to f32 arrays.
  CHECK(promote_types(PromotionType{f64, true}, PromotionType{f32}) == PromotionType{f32, false});
}
