// graft::special: the special functions, lowered to their primitives
// (ir/ops.def; scalar semantics in interpreter/kernels/special_functions.h)
// or composed of graft's ops as jax.scipy.special composes them.
#include "graft/special.h"

#include <limits>
#include <tuple>
#include <utility>

#include "api/dispatch.h"
#include "api/lowering.h"
#include "graft/autodiff.h"
#include "graft/ops.h"
#include "ir/dtype.h"

namespace graft::special {

using detail::bind1;
using ir::Op;

namespace {

DType float_dtype(DType d) { return ir::is_floating(d) ? d : default_float_dtype(); }

// The operands as arrays of one float dtype and one shape: the arrays
// promote (integers to the default float), numbers take their dtype.
std::vector<Array> float_operands(const char* name, std::vector<const Operand*> ops, const Loc& loc) {
  std::vector<Array> arrays;
  for (const Operand* o : ops)
    if (o->is_array()) arrays.push_back(o->array());
  DType d = default_float_dtype();
  if (!arrays.empty()) d = float_dtype(detail::promote_and_broadcast(name, arrays, loc)[0].dtype());
  std::vector<Array> args;
  for (const Operand* o : ops)
    args.push_back(o->is_array() ? detail::convert(o->array(), d, loc) : scalar(o->value(), d, loc));
  return detail::promote_and_broadcast(name, args, loc);
}

Array unary(Op op, const ArrayAt& x) {
  return bind1(op, {detail::as_float(x.array, ir::op_name(op).data(), x.loc)}, {}, x.loc);
}

Array nary(Op op, const char* name, std::vector<const Operand*> ops, const Loc& loc) {
  return bind1(op, float_operands(name, std::move(ops), loc), {}, loc);
}

using Pair = std::tuple<Array, Array>;

}  // namespace

Array erfinv(ArrayAt x) { return unary(Op::erf_inv, x); }
Array erfc(ArrayAt x) { return unary(Op::erfc, x); }
Array gammaln(ArrayAt x) { return unary(Op::lgamma, x); }
Array digamma(ArrayAt x) { return unary(Op::digamma, x); }
Array i0e(ArrayAt x) { return unary(Op::bessel_i0e, x); }
Array i1e(ArrayAt x) { return unary(Op::bessel_i1e, x); }
Array ndtr(ArrayAt x) { return unary(Op::ndtr, x); }
Array ndtri(ArrayAt p) { return unary(Op::ndtri, p); }
Array log_ndtr(ArrayAt x) { return unary(Op::log_ndtr, x); }
Array expit(ArrayAt x) { return unary(Op::logistic, x); }

// e^|x| i0e(x), as jax.scipy.special.i0. |x| is written max(x, -x): its
// even split at 0 gives |x| the derivative 0 there (abs's is +1), so the
// product's derivative at 0 is i0'(0) = 0 and i1'(0) = 1/2.
Array i0(ArrayAt x) {
  const Array f = detail::as_float(x.array, "special::i0", x.loc);
  return graft::exp({graft::maximum(f, -f, x.loc), x.loc}) * unary(Op::bessel_i0e, {f, x.loc});
}

Array i1(ArrayAt x) {
  const Array f = detail::as_float(x.array, "special::i1", x.loc);
  return graft::exp({graft::maximum(f, -f, x.loc), x.loc}) * unary(Op::bessel_i1e, {f, x.loc});
}

// -x log(x) for x > 0, 0 at 0, -inf below; the derivative -(log(x) + 1), as
// JAX's (whose xlogx rule this is).
Array entr(ArrayAt x) {
  const Array f = detail::as_float(x.array, "special::entr", x.loc);
  const double inf = std::numeric_limits<double>::infinity();
  auto xlogx = custom_jvp([](const Array& v) { return where(v == 0.0, zeros_like(v), v * graft::log(v)); },
                          [](const std::tuple<Array>& p, const std::tuple<Array>& t) {
                            const Array& v = std::get<0>(p);
                            return std::make_pair(where(v == 0.0, zeros_like(v), v * graft::log(v)),
                                                  std::get<0>(t) * (graft::log(v) + 1.0));
                          });
  return where(f < 0.0, full_like(f, -inf), -xlogx(f), x.loc);
}

// log(x / (1 - x)), with JAX's derivative 1 / (x (1 - x)).
Array logit(ArrayAt x) {
  const Array f = detail::as_float(x.array, "special::logit", x.loc);
  auto fn = custom_jvp([](const Array& v) { return graft::log(v / (1.0 - v)); },
                       [](const std::tuple<Array>& p, const std::tuple<Array>& t) {
                         const Array& v = std::get<0>(p);
                         return std::make_pair(graft::log(v / (1.0 - v)), std::get<0>(t) / (v * (1.0 - v)));
                       });
  return fn(f);
}

Array polygamma(Operand n, Operand x, Loc loc) { return nary(Op::polygamma, "polygamma", {&n, &x}, loc); }
Array zeta(Operand s, Operand q, Loc loc) { return nary(Op::zeta, "zeta", {&s, &q}, loc); }
Array gammainc(Operand a, Operand x, Loc loc) { return nary(Op::igamma, "gammainc", {&a, &x}, loc); }
Array gammaincc(Operand a, Operand x, Loc loc) { return nary(Op::igammac, "gammaincc", {&a, &x}, loc); }
Array betainc(Operand a, Operand b, Operand x, Loc loc) { return nary(Op::betainc, "betainc", {&a, &b, &x}, loc); }

Array betaln(Operand a, Operand b, Loc loc) {
  std::vector<Array> v = float_operands("betaln", {&a, &b}, loc);
  return unary(Op::lgamma, {v[0], loc}) + unary(Op::lgamma, {v[1], loc}) - unary(Op::lgamma, {v[0] + v[1], loc});
}

namespace {

// x log(y) (log_of: log) or x log1p(y) (log1p), 0 where x = 0 unless y is
// NaN, with JAX's derivative t_x log_of(y) + t_y x / slope_of(y), where
// slope_of(y) is y or 1 + y.
template <class LogOf, class SlopeOf>
Array x_log(const char* name, Operand& x, Operand& y, LogOf log_of, SlopeOf slope_of, const Loc& loc) {
  std::vector<Array> v = float_operands(name, {&x, &y}, loc);
  auto value = [log_of](const Array& a, const Array& b) {
    return where(logical_or(a != 0.0, b != b), a * log_of(b), zeros_like(a));
  };
  auto fn = custom_jvp(value, [value, log_of, slope_of](const Pair& p, const Pair& t) {
    const Array &a = std::get<0>(p), &b = std::get<1>(p);
    return std::make_pair(value(a, b), std::get<0>(t) * log_of(b) + std::get<1>(t) * a / slope_of(b));
  });
  return fn(v[0], v[1]);
}

}  // namespace

Array xlogy(Operand x, Operand y, Loc loc) {
  return x_log(
      "xlogy", x, y, [](const Array& b) { return graft::log(b); }, [](const Array& b) { return b; }, loc);
}

Array xlog1py(Operand x, Operand y, Loc loc) {
  return x_log(
      "xlog1py", x, y, [](const Array& b) { return graft::log1p(b); }, [](const Array& b) { return 1.0 + b; }, loc);
}

}  // namespace graft::special
