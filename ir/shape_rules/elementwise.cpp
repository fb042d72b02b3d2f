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

OutTypes is_finite_rule(const RuleCtx& c) {
  check_dtype(c, c.input(0).dtype, Accepts::floats);
  return {ValueType{DType::bool_, c.input(0).shape}};
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

OutTypes select_rule(const RuleCtx& c) {
  const ValueType& pred = c.input(0);
  if (pred.dtype != DType::bool_) c.dtype_error(std::string("predicate must be bool, got ") + dtype_name(pred.dtype));
  check_same(c, c.input(1), c.input(2));
  if (pred.rank() != 0 && pred.shape != c.input(1).shape)
    c.shape_error("predicate shape " + shape_str(pred.shape) + " must be scalar or the branches' shape " +
                  shape_str(c.input(1).shape));
  return {c.input(1)};
}

OutTypes convert_rule(const RuleCtx& c) { return {ValueType{c.attr_dtype("new_dtype"), c.input(0).shape}}; }

}  // namespace

void register_elementwise_shape_rules(ShapeRuleTable& t) {
  auto set = [&](Op op, ShapeRule r) { t[static_cast<size_t>(op)] = r; };
  for (Op op : {Op::floor, Op::ceil, Op::round, Op::exp, Op::log, Op::log1p, Op::expm1, Op::sqrt, Op::rsqrt,
                Op::sin, Op::cos, Op::tan, Op::asin, Op::acos, Op::atan, Op::sinh, Op::cosh, Op::tanh,
                Op::logistic, Op::erf})
    set(op, unary<Accepts::floats>);
  for (Op op : {Op::abs, Op::sign, Op::neg}) set(op, unary<Accepts::signed_numbers>);
  for (Op op : {Op::square, Op::reciprocal}) set(op, unary<Accepts::numbers>);
  set(Op::not_, unary<Accepts::ints_or_bool>);
  set(Op::stop_gradient, unary<Accepts::any>);
  set(Op::copy, unary<Accepts::any>);
  set(Op::is_finite, is_finite_rule);
  for (Op op : {Op::add, Op::sub, Op::mul, Op::div, Op::rem, Op::max, Op::min}) set(op, binary<Accepts::numbers>);
  for (Op op : {Op::pow, Op::atan2}) set(op, binary<Accepts::floats>);
  for (Op op : {Op::and_, Op::or_, Op::xor_}) set(op, binary<Accepts::ints_or_bool>);
  for (Op op : {Op::eq, Op::ne, Op::lt, Op::le, Op::gt, Op::ge}) set(op, compare);
  set(Op::select, select_rule);
  set(Op::convert_element_type, convert_rule);
}

}  // namespace graft::ir
