// Shape/dtype rules of the elementwise family: operands of one shape (select's
// predicate may be a scalar), result of that shape.
#include "ir/dtype.h"
#include "ir/shape_rules/rule.h"

namespace graft::ir {
namespace {

using Types = std::vector<ValueType>;

// Which dtypes an op accepts.
enum class Accepts { floats, numbers, signed_numbers, ints_or_bool, any };

void check_dtype(const RuleCtx& c, DType d, Accepts accepts) {
  bool ok = false;
  const char* want = "";
  switch (accepts) {
    case Accepts::floats: ok = is_floating(d); want = "a float dtype (f32, f64)"; break;
    case Accepts::numbers: ok = d != DType::bool_; want = "a numeric dtype"; break;
    case Accepts::signed_numbers: ok = d != DType::bool_ && d != DType::u32; want = "a signed numeric dtype"; break;
    case Accepts::ints_or_bool: ok = !is_floating(d); want = "an integer or bool dtype"; break;
    case Accepts::any: ok = true; break;
  }
  if (!ok) c.dtype_error(std::string("needs ") + want + ", got " + dtype_name(d));
}

template <Accepts A>
OutTypes unary(const RuleCtx& c) {
  check_dtype(c, c.input(0).dtype, A);
  return {c.input(0)};
}

void check_same(const RuleCtx& c, const ValueType& a, const ValueType& b) {
  if (a.shape != b.shape) c.shape_error("operand shapes " + shape_str(a.shape) + " and " + shape_str(b.shape) + " differ");
  if (a.dtype != b.dtype)
    c.dtype_error(std::string("operand dtypes ") + dtype_name(a.dtype) + " and " + dtype_name(b.dtype) + " differ");
}

template <Accepts A>
OutTypes binary(const RuleCtx& c) {
  check_same(c, c.input(0), c.input(1));
  check_dtype(c, c.input(0).dtype, A);
  return {c.input(0)};
}

OutTypes compare(const RuleCtx& c) {
  check_same(c, c.input(0), c.input(1));
  return {ValueType{DType::bool_, c.input(0).shape}};
}

}  // namespace

OutTypes neg_shape(const RuleCtx& c) { return unary<Accepts::signed_numbers>(c); }
OutTypes abs_shape(const RuleCtx& c) { return unary<Accepts::signed_numbers>(c); }
OutTypes sign_shape(const RuleCtx& c) { return unary<Accepts::signed_numbers>(c); }
OutTypes floor_shape(const RuleCtx& c) { return unary<Accepts::floats>(c); }
OutTypes ceil_shape(const RuleCtx& c) { return unary<Accepts::floats>(c); }
OutTypes round_shape(const RuleCtx& c) { return unary<Accepts::floats>(c); }
OutTypes exp_shape(const RuleCtx& c) { return unary<Accepts::floats>(c); }
OutTypes log_shape(const RuleCtx& c) { return unary<Accepts::floats>(c); }
OutTypes log1p_shape(const RuleCtx& c) { return unary<Accepts::floats>(c); }
OutTypes expm1_shape(const RuleCtx& c) { return unary<Accepts::floats>(c); }
OutTypes sqrt_shape(const RuleCtx& c) { return unary<Accepts::floats>(c); }
OutTypes rsqrt_shape(const RuleCtx& c) { return unary<Accepts::floats>(c); }
OutTypes sin_shape(const RuleCtx& c) { return unary<Accepts::floats>(c); }
OutTypes cos_shape(const RuleCtx& c) { return unary<Accepts::floats>(c); }
OutTypes tan_shape(const RuleCtx& c) { return unary<Accepts::floats>(c); }
OutTypes asin_shape(const RuleCtx& c) { return unary<Accepts::floats>(c); }
OutTypes acos_shape(const RuleCtx& c) { return unary<Accepts::floats>(c); }
OutTypes atan_shape(const RuleCtx& c) { return unary<Accepts::floats>(c); }
OutTypes sinh_shape(const RuleCtx& c) { return unary<Accepts::floats>(c); }
OutTypes cosh_shape(const RuleCtx& c) { return unary<Accepts::floats>(c); }
OutTypes tanh_shape(const RuleCtx& c) { return unary<Accepts::floats>(c); }
OutTypes logistic_shape(const RuleCtx& c) { return unary<Accepts::floats>(c); }
OutTypes erf_shape(const RuleCtx& c) { return unary<Accepts::floats>(c); }
OutTypes square_shape(const RuleCtx& c) { return unary<Accepts::numbers>(c); }
OutTypes reciprocal_shape(const RuleCtx& c) { return unary<Accepts::numbers>(c); }

OutTypes is_finite_shape(const RuleCtx& c) {
  check_dtype(c, c.input(0).dtype, Accepts::floats);
  return {ValueType{DType::bool_, c.input(0).shape}};
}

OutTypes not__shape(const RuleCtx& c) { return unary<Accepts::ints_or_bool>(c); }
OutTypes stop_gradient_shape(const RuleCtx& c) { return unary<Accepts::any>(c); }
OutTypes copy_shape(const RuleCtx& c) { return unary<Accepts::any>(c); }

OutTypes add_shape(const RuleCtx& c) { return binary<Accepts::numbers>(c); }
OutTypes sub_shape(const RuleCtx& c) { return binary<Accepts::numbers>(c); }
OutTypes mul_shape(const RuleCtx& c) { return binary<Accepts::numbers>(c); }
OutTypes div_shape(const RuleCtx& c) { return binary<Accepts::numbers>(c); }
OutTypes rem_shape(const RuleCtx& c) { return binary<Accepts::numbers>(c); }
OutTypes pow_shape(const RuleCtx& c) { return binary<Accepts::floats>(c); }
OutTypes max_shape(const RuleCtx& c) { return binary<Accepts::numbers>(c); }
OutTypes min_shape(const RuleCtx& c) { return binary<Accepts::numbers>(c); }
OutTypes atan2_shape(const RuleCtx& c) { return binary<Accepts::floats>(c); }
OutTypes and__shape(const RuleCtx& c) { return binary<Accepts::ints_or_bool>(c); }
OutTypes or__shape(const RuleCtx& c) { return binary<Accepts::ints_or_bool>(c); }
OutTypes xor__shape(const RuleCtx& c) { return binary<Accepts::ints_or_bool>(c); }

OutTypes eq_shape(const RuleCtx& c) { return compare(c); }
OutTypes ne_shape(const RuleCtx& c) { return compare(c); }
OutTypes lt_shape(const RuleCtx& c) { return compare(c); }
OutTypes le_shape(const RuleCtx& c) { return compare(c); }
OutTypes gt_shape(const RuleCtx& c) { return compare(c); }
OutTypes ge_shape(const RuleCtx& c) { return compare(c); }

OutTypes select_shape(const RuleCtx& c) {
  const ValueType& pred = c.input(0);
  if (pred.dtype != DType::bool_) c.dtype_error(std::string("predicate must be bool, got ") + dtype_name(pred.dtype));
  check_same(c, c.input(1), c.input(2));
  if (pred.rank() != 0 && pred.shape != c.input(1).shape)
    c.shape_error("predicate shape " + shape_str(pred.shape) + " must be scalar or the branches' shape " +
                  shape_str(c.input(1).shape));
  return {c.input(1)};
}

OutTypes convert_element_type_shape(const RuleCtx& c) {
  return {ValueType{c.attr_dtype("new_dtype"), c.input(0).shape}};
}

}  // namespace graft::ir
