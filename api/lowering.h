// Helpers that lower NumPy-style calls to strict primitives: broadcasting,
// promotion, axis normalisation. Errors name the user-facing op and line.
#pragma once

#include <source_location>
#include <string>
#include <vector>

#include "graft/array.h"
#include "ir/dtype.h"

namespace graft::detail {

std::string where(const std::source_location& loc);  // " at file:line"
std::string describe(const Array& a);                // "f32[3,4]"

// NumPy broadcasting of shapes; ShapeError naming `op` when they do not fit.
Shape broadcast_shapes(const char* op, const std::vector<Array>& args, const std::source_location& loc);
Shape broadcast_shapes(const char* op, const std::vector<Shape>& shapes, const std::source_location& loc);
Array broadcast_to_shape(const Array& x, const Shape& shape, const std::source_location& loc);
Array convert(const Array& x, DType dtype, const std::source_location& loc);
// x where it is a float array, else x converted to the default float dtype
// (NumPy's sin(int)); name is the op an empty handle is reported for.
Array as_float(const Array& x, const char* name, const std::source_location& loc);
// v rounded to the float dtype (to nearest even; bf16 through f32, as JAX), as a double.
inline double round_to_float_dtype(double v, DType dtype) {
  switch (dtype) {
    case DType::f16: return static_cast<float>(float16::from_bits(half_bits::f16_of_double(v)));
    case DType::bf16: return static_cast<float>(bfloat16(static_cast<float>(v)));
    case DType::f32: return static_cast<float>(v);
    default: return v;
  }
}
// The ulp of 1 in a float dtype (numpy.finfo(dtype).eps).
inline double eps_of(DType dtype) {
  return dtype == DType::f16 ? 0x1p-10 : dtype == DType::bf16 ? 0x1p-7 : dtype == DType::f32 ? 0x1p-23 : 0x1p-52;
}
// The dtype x and a C++ number of the given kind compute in: the number is
// weakly typed, so it takes x's dtype unless its kind is higher (JAX's rule).
DType weak_scalar_dtype(const Array& x, bool is_float, const char* op);
// Promotes to one dtype and broadcasts to one shape.
std::vector<Array> promote_and_broadcast(const char* op, std::vector<Array> args, const std::source_location& loc);
// NumPy's remainder and floor_divide of operands of one dtype and shape
// (api/numpy_helpers.cpp): the result of `%` takes the divisor's sign.
Array numpy_remainder(const Array& a, const Array& b, const std::source_location& loc);
Array numpy_floor_divide(const Array& a, const Array& b, const std::source_location& loc);
// axis in [-rank, rank) -> [0, rank); ShapeError naming op otherwise.
int normalize_axis(const char* op, int64_t axis, int rank, const std::source_location& loc);

}  // namespace graft::detail
