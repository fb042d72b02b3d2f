// Binary ops and where with a plain number for one operand. The number is
// weakly typed (it adopts the array's dtype unless its kind is higher), the
// rule of the arithmetic operators, so an f64 array meets the exact double.
#include "api/array_impl.h"
#include "api/dispatch.h"
#include "api/lowering.h"
#include "graft/errors.h"
#include "graft/ops.h"

namespace graft::detail {

namespace {

struct ScalarOpInfo {
  ir::Op op;
  const char* name;
  bool float_only;  // integer results compute in f32, as the Array overloads do
};

ScalarOpInfo info(ScalarBinary op) {
  switch (op) {
    case ScalarBinary::pow: return {ir::Op::pow, "pow", true};
    case ScalarBinary::maximum: return {ir::Op::max, "maximum", false};
    case ScalarBinary::minimum: return {ir::Op::min, "minimum", false};
    case ScalarBinary::atan2: return {ir::Op::atan2, "atan2", true};
    case ScalarBinary::remainder: return {ir::Op::rem, "remainder", false};
    case ScalarBinary::floor_divide: return {ir::Op::div, "floor_divide", false};
    case ScalarBinary::bitwise_and: return {ir::Op::bitwise_and, "bitwise_and", false};
    case ScalarBinary::bitwise_or: return {ir::Op::bitwise_or, "bitwise_or", false};
    case ScalarBinary::bitwise_xor: return {ir::Op::bitwise_xor, "bitwise_xor", false};
    case ScalarBinary::left_shift: return {ir::Op::shift_left, "left_shift", false};
    case ScalarBinary::right_shift: return {ir::Op::shift_right_arithmetic, "right_shift", false};
  }
  return {ir::Op::pow, "pow", true};
}

}  // namespace

Array binary_scalar(ScalarBinary op, const Array& x, double value, bool is_float, bool scalar_first, const Loc& loc) {
  ScalarOpInfo i = info(op);
  DType d = weak_scalar_dtype(x, is_float, i.name);
  if (i.float_only && !ir::is_floating(d)) d = default_float_dtype();
  Array xs = convert(x, d, loc);
  Array s = broadcast_to_shape(scalar(value, d, loc), xs.shape(), loc);
  if (op == ScalarBinary::remainder || op == ScalarBinary::floor_divide) {
    const Array& a = scalar_first ? s : xs;
    const Array& b = scalar_first ? xs : s;
    return op == ScalarBinary::remainder ? numpy_remainder(a, b, loc) : numpy_floor_divide(a, b, loc);
  }
  const Array& a = scalar_first ? s : xs;
  const Array& b = scalar_first ? xs : s;
  switch (op) {  // the Array functions check the dtypes and pick the shift by signedness
    case ScalarBinary::bitwise_and: return bitwise_and(a, b, loc);
    case ScalarBinary::bitwise_or: return bitwise_or(a, b, loc);
    case ScalarBinary::bitwise_xor: return bitwise_xor(a, b, loc);
    case ScalarBinary::left_shift: return left_shift(a, b, loc);
    case ScalarBinary::right_shift: return right_shift(a, b, loc);
    default: return bind1(i.op, {a, b}, {}, loc);
  }
}

Array where_scalar(const Array& cond, const Array& x, double value, bool is_float, bool scalar_first, const Loc& loc) {
  DType d = weak_scalar_dtype(x, is_float, "where");
  Array xs = convert(x, d, loc);
  Array s = scalar(value, d, loc);
  return scalar_first ? where(cond, s, xs, loc) : where(cond, xs, s, loc);
}

}  // namespace graft::detail
