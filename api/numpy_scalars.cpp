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
  return bind1(i.op, scalar_first ? std::vector<Array>{s, xs} : std::vector<Array>{xs, s}, {}, loc);
}

Array where_scalar(const Array& cond, const Array& x, double value, bool is_float, bool scalar_first, const Loc& loc) {
  DType d = weak_scalar_dtype(x, is_float, "where");
  Array xs = convert(x, d, loc);
  Array s = scalar(value, d, loc);
  return scalar_first ? where(cond, s, xs, loc) : where(cond, xs, s, loc);
}

}  // namespace graft::detail
