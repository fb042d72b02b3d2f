// Shape/dtype rules of the elementwise family: operands of one shape (select's
// predicate may be a scalar), result of that shape. Most ops take the
// standard SAME_TYPE or BOOL_RESULT rule (ops.def's `shape` column).
#include "ir/dtype.h"
#include "ir/shape_rules/rule.h"

namespace graft::ir {
namespace {

void check_same(const RuleCtx& c, const ValueType& a, const ValueType& b) {
  if (a.shape != b.shape) c.shape_error("operand shapes " + shape_str(a.shape) + " and " + shape_str(b.shape) + " differ");
  if (a.dtype != b.dtype)
    c.dtype_error(std::string("operand dtypes ") + dtype_name(a.dtype) + " and " + dtype_name(b.dtype) + " differ");
}

}  // namespace

// SAME_TYPE: operands of one shape and dtype, which the `dtypes` column accepts.
OutTypes same_type_rule(const RuleCtx& c) {
  for (size_t i = 1; i < c.num_inputs(); ++i) check_same(c, c.input(0), c.input(i));
  check_accepted_dtype(c, c.input(0).dtype);
  return {c.input(0)};
}

// BOOL_RESULT: as SAME_TYPE, with a bool result (comparisons, is_finite).
OutTypes bool_result_rule(const RuleCtx& c) {
  for (size_t i = 1; i < c.num_inputs(); ++i) check_same(c, c.input(0), c.input(i));
  check_accepted_dtype(c, c.input(0).dtype);
  return {ValueType{DType::bool_, c.input(0).shape}};
}

OutTypes select_shape(const RuleCtx& c) {
  const ValueType& pred = c.input(0);
  if (pred.dtype != DType::bool_) c.dtype_error(std::string("predicate must be bool, got ") + dtype_name(pred.dtype));
  check_same(c, c.input(1), c.input(2));
  if (pred.rank() != 0 && pred.shape != c.input(1).shape)
    c.shape_error("predicate shape " + shape_str(pred.shape) + " must be scalar or the branches' shape " +
                  shape_str(c.input(1).shape));
  return {c.input(1)};
}

// abs: SAME_TYPE, but the absolute value of a complex number is real.
OutTypes abs_shape(const RuleCtx& c) {
  check_accepted_dtype(c, c.input(0).dtype);
  return {ValueType{real_dtype(c.input(0).dtype), c.input(0).shape}};
}

// complex(re, im): parts of one shape and of f32 or f64 (as lax.complex), a c64 or c128 result.
OutTypes complex_shape(const RuleCtx& c) {
  check_same(c, c.input(0), c.input(1));
  const DType d = c.input(0).dtype;
  if (d != DType::f32 && d != DType::f64) c.dtype_error(std::string("needs f32 or f64 parts, got ") + dtype_name(d));
  return {ValueType{complex_dtype(d), c.input(0).shape}};
}

// real(z) and imag(z): a part of each complex element, f32 of c64, f64 of c128.
OutTypes real_shape(const RuleCtx& c) {
  check_accepted_dtype(c, c.input(0).dtype);
  return {ValueType{real_dtype(c.input(0).dtype), c.input(0).shape}};
}
OutTypes imag_shape(const RuleCtx& c) { return real_shape(c); }

OutTypes convert_element_type_shape(const RuleCtx& c) {
  return {ValueType{c.attr_dtype("new_dtype"), c.input(0).shape}};
}

// The bits of each element read as new_dtype (lax.bitcast_convert_type): a
// dtype of the same width, so the op stays elementwise. graft::bitcast
// views across widths with this op, shifts and a reshape (api/ops_elementwise.cpp).
OutTypes bitcast_convert_type_shape(const RuleCtx& c) {
  const DType from = c.input(0).dtype, to = c.attr_dtype("new_dtype");
  if (from == DType::bool_ || to == DType::bool_)
    c.dtype_error(std::string("cannot reinterpret ") + dtype_name(from) + " as " + dtype_name(to) +
                  ": bool has no bit layout");
  if (dtype_size(from) != dtype_size(to))
    c.dtype_error(std::string("cannot reinterpret ") + dtype_name(from) + " (" + std::to_string(dtype_size(from)) +
                  " bytes) as " + dtype_name(to) + " (" + std::to_string(dtype_size(to)) +
                  " bytes): only dtypes of one width (graft::bitcast views across widths)");
  return {ValueType{to, c.input(0).shape}};
}

}  // namespace graft::ir
