// Elementwise operations and the arithmetic operators, lowered to primitives.
#include <cmath>

#include "api/array_impl.h"
#include "api/dispatch.h"
#include "api/lowering.h"
#include "graft/errors.h"
#include "graft/ops.h"
#include "ir/dtype.h"
#include "ir/trace.h"

namespace graft {

using detail::bind1;
using ir::Op;

namespace {

Array unary(Op op, const Array& x, const Loc& loc) { return bind1(op, {x}, {}, loc); }

// Float ops on integer arrays compute in the default float dtype, as NumPy's sin(int) does.
Array unary_float(Op op, const Array& x, const Loc& loc) {
  return bind1(op, {detail::as_float(x, ir::op_name(op).data(), loc)}, {}, loc);
}

Array binary(Op op, const char* name, const Array& a, const Array& b, const Loc& loc) {
  std::vector<Array> args = detail::promote_and_broadcast(name, {a, b}, loc);
  return bind1(op, args, {}, loc);
}

Array binary_float(Op op, const char* name, const Array& a, const Array& b, const Loc& loc) {
  std::vector<Array> args = detail::promote_and_broadcast(name, {a, b}, loc);
  if (!ir::is_inexact(args[0].dtype()))
    for (Array& x : args) x = detail::convert(x, default_float_dtype(), loc);
  return bind1(op, args, {}, loc);
}

Op to_op(detail::BinaryOp op) {
  switch (op) {
    case detail::BinaryOp::add: return Op::add;
    case detail::BinaryOp::sub: return Op::sub;
    case detail::BinaryOp::mul: return Op::mul;
    case detail::BinaryOp::div: return Op::div;
    case detail::BinaryOp::lt: return Op::lt;
    case detail::BinaryOp::le: return Op::le;
    case detail::BinaryOp::gt: return Op::gt;
    case detail::BinaryOp::ge: return Op::ge;
    case detail::BinaryOp::eq: return Op::eq;
    case detail::BinaryOp::ne: return Op::ne;
    case detail::BinaryOp::rem: return Op::rem;
    case detail::BinaryOp::bit_and: return Op::bitwise_and;
    case detail::BinaryOp::bit_or: return Op::bitwise_or;
    case detail::BinaryOp::bit_xor: return Op::bitwise_xor;
    case detail::BinaryOp::shl: return Op::shift_left;
    case detail::BinaryOp::shr: return Op::shift_right_arithmetic;
  }
  return Op::add;
}

// Ops whose ops.def `dtypes` column takes floats only convert other operands
// to the default float first, as NumPy's sin(int) does.
Array elementwise_unary(Op op, const ArrayAt& x) {
  const ir::DTypeClass c = ir::op_info(op).dtypes;
  if (c == ir::DTypeClass::floats || c == ir::DTypeClass::inexact) return unary_float(op, x.array, x.loc);
  return unary(op, x.array, x.loc);
}

}  // namespace

Array neg(ArrayAt x) { return elementwise_unary(Op::neg, x); }

// ---- complex numbers

Array complex(const Array& re, const Array& im, Loc loc) {
  std::vector<Array> args = detail::promote_and_broadcast("complex", {re, im}, loc);
  const DType d = args[0].dtype();
  if (ir::is_complex(d))
    throw DTypeError(std::string("complex: needs real parts, got ") + detail::describe(args[0]) + detail::where(loc));
  const DType part = d == DType::f64 ? DType::f64 : d == DType::f32 ? DType::f32 : default_float_dtype();
  for (Array& a : args) a = detail::convert(a, part, loc);
  return bind1(Op::complex, args, {}, loc);
}

Array real(const Array& x, Loc loc) {
  return ir::is_complex(detail::checked_impl(x, "real").type.dtype) ? bind1(Op::real, {x}, {}, loc) : x;
}

Array imag(const Array& x, Loc loc) {
  if (ir::is_complex(detail::checked_impl(x, "imag").type.dtype)) return bind1(Op::imag, {x}, {}, loc);
  return zeros_like(x, std::nullopt, loc);
}

Array conj(const Array& x, Loc loc) {
  return ir::is_complex(detail::checked_impl(x, "conj").type.dtype) ? bind1(Op::conj, {x}, {}, loc) : x;
}

Array angle(const Array& x, Loc loc) {
  const Array z = detail::as_float(x, "angle", loc);
  return atan2(imag(z, loc), real(z, loc), loc);
}
Array abs(ArrayAt x) { return elementwise_unary(Op::abs, x); }
Array sign(ArrayAt x) { return elementwise_unary(Op::sign, x); }
Array floor(ArrayAt x) { return elementwise_unary(Op::floor, x); }
Array ceil(ArrayAt x) { return elementwise_unary(Op::ceil, x); }
Array round(ArrayAt x) { return elementwise_unary(Op::round, x); }
Array exp(ArrayAt x) { return elementwise_unary(Op::exp, x); }
Array log(ArrayAt x) { return elementwise_unary(Op::log, x); }
Array log1p(ArrayAt x) { return elementwise_unary(Op::log1p, x); }
Array expm1(ArrayAt x) { return elementwise_unary(Op::expm1, x); }
Array sqrt(ArrayAt x) { return elementwise_unary(Op::sqrt, x); }
Array rsqrt(ArrayAt x) { return elementwise_unary(Op::rsqrt, x); }
Array cbrt(ArrayAt x) { return elementwise_unary(Op::cbrt, x); }
Array sin(ArrayAt x) { return elementwise_unary(Op::sin, x); }
Array cos(ArrayAt x) { return elementwise_unary(Op::cos, x); }
Array tan(ArrayAt x) { return elementwise_unary(Op::tan, x); }
Array asin(ArrayAt x) { return elementwise_unary(Op::asin, x); }
Array acos(ArrayAt x) { return elementwise_unary(Op::acos, x); }
Array atan(ArrayAt x) { return elementwise_unary(Op::atan, x); }
Array sinh(ArrayAt x) { return elementwise_unary(Op::sinh, x); }
Array cosh(ArrayAt x) { return elementwise_unary(Op::cosh, x); }
Array tanh(ArrayAt x) { return elementwise_unary(Op::tanh, x); }
Array logistic(ArrayAt x) { return elementwise_unary(Op::logistic, x); }
Array sigmoid(ArrayAt x) { return elementwise_unary(Op::logistic, x); }
Array erf(ArrayAt x) { return elementwise_unary(Op::erf, x); }
Array erf_inv(ArrayAt x) { return elementwise_unary(Op::erf_inv, x); }
Array exp2(ArrayAt x) { return elementwise_unary(Op::exp2, x); }
Array log2(ArrayAt x) { return elementwise_unary(Op::log2, x); }
Array log10(ArrayAt x) { return elementwise_unary(Op::log10, x); }
Array asinh(ArrayAt x) { return elementwise_unary(Op::asinh, x); }
Array acosh(ArrayAt x) { return elementwise_unary(Op::acosh, x); }
Array atanh(ArrayAt x) { return elementwise_unary(Op::atanh, x); }
Array trunc(ArrayAt x) { return elementwise_unary(Op::trunc, x); }
Array square(ArrayAt x) { return elementwise_unary(Op::square, x); }
// The primitive takes integers too (1 / x in x's dtype); the API computes in floats.
Array reciprocal(ArrayAt x) { return unary_float(Op::reciprocal, x.array, x.loc); }
Array stop_gradient(ArrayAt x) { return elementwise_unary(Op::stop_gradient, x); }

Array isfinite(ArrayAt at) {
  const Array& x = at.array;
  const Loc& loc = at.loc;
  const DType d = detail::checked_impl(x, "isfinite").type.dtype;
  if (ir::is_complex(d)) return logical_and(isfinite({real(x, loc), loc}), isfinite({imag(x, loc), loc}), loc);
  if (!ir::is_floating(d)) return full(x.shape(), 1, DType::bool_, loc);
  return bind1(Op::is_finite, {x}, {}, loc);
}

Array logical_not(ArrayAt x) { return bind1(Op::bitwise_not, {detail::convert(x.array, DType::bool_, x.loc)}, {}, x.loc); }

Array pow(const Array& x, const Array& y, Loc loc) { return binary_float(Op::pow, "pow", x, y, loc); }
Array maximum(const Array& x, const Array& y, Loc loc) { return binary(Op::max, "maximum", x, y, loc); }
Array minimum(const Array& x, const Array& y, Loc loc) { return binary(Op::min, "minimum", x, y, loc); }
Array atan2(const Array& y, const Array& x, Loc loc) { return binary_float(Op::atan2, "atan2", y, x, loc); }

Array logical_and(const Array& x, const Array& y, Loc loc) {
  return binary(Op::bitwise_and, "logical_and", detail::convert(x, DType::bool_, loc), detail::convert(y, DType::bool_, loc), loc);
}
Array logical_or(const Array& x, const Array& y, Loc loc) {
  return binary(Op::bitwise_or, "logical_or", detail::convert(x, DType::bool_, loc), detail::convert(y, DType::bool_, loc), loc);
}

Array bitwise_and(const Array& x, const Array& y, Loc loc) { return binary(Op::bitwise_and, "bitwise_and", x, y, loc); }
Array bitwise_or(const Array& x, const Array& y, Loc loc) { return binary(Op::bitwise_or, "bitwise_or", x, y, loc); }
Array bitwise_xor(const Array& x, const Array& y, Loc loc) { return binary(Op::bitwise_xor, "bitwise_xor", x, y, loc); }
Array bitwise_not(ArrayAt x) { return bind1(Op::bitwise_not, {x.array}, {}, x.loc); }
Array left_shift(const Array& x, const Array& y, Loc loc) { return binary(Op::shift_left, "left_shift", x, y, loc); }
// NumPy's >>: the sign fills for signed integers, zeros for unsigned ones.
Array right_shift(const Array& x, const Array& y, Loc loc) {
  std::vector<Array> args = detail::promote_and_broadcast("right_shift", {x, y}, loc);
  const Op op = ir::is_integer(args[0].dtype()) && !ir::is_signed_integer(args[0].dtype()) ? Op::shift_right_logical
                                                                                           : Op::shift_right_arithmetic;
  return bind1(op, args, {}, loc);
}
Array population_count(ArrayAt x) { return bind1(Op::population_count, {x.array}, {}, x.loc); }
Array clz(ArrayAt x) { return bind1(Op::clz, {x.array}, {}, x.loc); }

Array operator&(ArrayAt a, const Array& b) { return bitwise_and(a.array, b, a.loc); }
Array operator|(ArrayAt a, const Array& b) { return bitwise_or(a.array, b, a.loc); }
Array operator^(ArrayAt a, const Array& b) { return bitwise_xor(a.array, b, a.loc); }
Array operator~(ArrayAt a) { return bitwise_not(a); }
Array operator<<(ArrayAt a, const Array& b) { return left_shift(a.array, b, a.loc); }
Array operator>>(ArrayAt a, const Array& b) { return right_shift(a.array, b, a.loc); }

Array nextafter(const Array& x, const Array& y, Loc loc) { return binary_float(Op::nextafter, "nextafter", x, y, loc); }

Array where(const Array& cond, const Array& x, const Array& y, Loc loc) {
  std::vector<Array> branches = detail::promote_and_broadcast("where", {x, y}, loc);
  Shape shape = detail::broadcast_shapes("where", {cond, branches[0]}, loc);
  Array pred = detail::broadcast_to_shape(detail::convert(cond, DType::bool_, loc), shape, loc);
  return bind1(Op::select, {pred, detail::broadcast_to_shape(branches[0], shape, loc),
                            detail::broadcast_to_shape(branches[1], shape, loc)},
               {}, loc);
}

Array clip(const Array& x, double lo, double hi, Loc loc) {
  DType d = detail::checked_impl(x, "clip").type.dtype;
  Array lo_a = detail::broadcast_to_shape(scalar(lo, d, loc), x.shape(), loc);
  Array hi_a = detail::broadcast_to_shape(scalar(hi, d, loc), x.shape(), loc);
  return bind1(Op::min, {bind1(Op::max, {x, lo_a}, {}, loc), hi_a}, {}, loc);
}

Array astype(const Array& x, DType dtype, Loc loc) { return detail::convert(x, dtype, loc); }

namespace {

DType unsigned_of_size(size_t bytes) {
  return bytes == 1 ? DType::u8 : bytes == 2 ? DType::u16 : bytes == 4 ? DType::u32 : DType::u64;
}

}  // namespace

// NumPy's x.view(dtype), which JAX's arrays share: bitcast_convert_type
// where the width stays; across widths the last axis holds the same bytes
// as more narrow or fewer wide elements, low bytes first (a little-endian
// machine), written with shifts of the unsigned bits.
Array bitcast(const Array& x, DType dtype, Loc loc) {
  const DType from = detail::checked_impl(x, "bitcast").type.dtype;
  if (from == dtype) return x;
  const size_t a = ir::dtype_size(from), b = ir::dtype_size(dtype);
  if (a == b || from == DType::bool_ || dtype == DType::bool_)
    return bind1(Op::bitcast_convert_type, {x}, {{"new_dtype", dtype}}, loc);  // the shape rule names bool
  if (ir::is_complex(from) || ir::is_complex(dtype))
    throw DTypeError(std::string("bitcast: cannot view ") + detail::describe(x) + " as " + dtype_name(dtype) +
                     ": complex values keep their width" + detail::where(loc));
  const size_t ratio = a > b ? a / b : b / a;
  const int64_t n = x.ndim() == 0 ? 0 : x.shape().back();
  if (x.ndim() == 0 || (b > a && n % static_cast<int64_t>(ratio) != 0))
    throw ShapeError(std::string("bitcast: cannot view ") + detail::describe(x) + " as " + dtype_name(dtype) +
                     (x.ndim() == 0 ? std::string(": a scalar cannot change width")
                                    : ": the last axis must be a multiple of " + std::to_string(ratio)) +
                     detail::where(loc));
  Shape out = x.shape();
  out.back() = b > a ? n / static_cast<int64_t>(ratio) : n * static_cast<int64_t>(ratio);
  const Array bits = bitcast(x, unsigned_of_size(a), loc);
  if (a > b) {  // each element splits into `ratio` narrow ones
    std::vector<Array> parts;
    for (size_t k = 0; k < ratio; ++k)
      parts.push_back(
          expand_dims(astype(right_shift(bits, static_cast<int>(8 * b * k), loc), unsigned_of_size(b), loc), -1, loc));
    return bitcast(reshape(concatenate(parts, -1, loc), out, loc), dtype, loc);
  }
  Shape grouped = out;  // each group of `ratio` elements joins into one
  grouped.push_back(static_cast<int64_t>(ratio));
  const Array groups = reshape(bits, grouped, loc);
  const int last = static_cast<int>(grouped.size()) - 1;
  Array joined;
  for (size_t k = 0; k < ratio; ++k) {
    Shape start(grouped.size(), 0), stop = grouped;
    start[last] = static_cast<int64_t>(k);
    stop[last] = static_cast<int64_t>(k) + 1;
    const Array part = astype(squeeze(slice(groups, start, stop, {}, loc), {last}, loc), unsigned_of_size(b), loc);
    const Array shifted = k == 0 ? part : left_shift(part, static_cast<int>(8 * a * k), loc);
    joined = k == 0 ? shifted : bitwise_or(joined, shifted, loc);
  }
  return bitcast(joined, dtype, loc);
}

// ---- operators

#define GRAFT_OPERATOR(sym, op, name) \
  Array operator sym(ArrayAt a, const Array& b) { return binary(Op::op, name, a.array, b, a.loc); }
GRAFT_OPERATOR(+, add, "add")
GRAFT_OPERATOR(-, sub, "sub")
GRAFT_OPERATOR(*, mul, "mul")
GRAFT_OPERATOR(<, lt, "lt")
GRAFT_OPERATOR(<=, le, "le")
GRAFT_OPERATOR(>, gt, "gt")
GRAFT_OPERATOR(>=, ge, "ge")
GRAFT_OPERATOR(==, eq, "eq")
GRAFT_OPERATOR(!=, ne, "ne")
#undef GRAFT_OPERATOR

// True division, as NumPy's `/`: integers divide in the default float dtype.
Array operator/(ArrayAt a, const Array& b) { return binary_float(Op::div, "div", a.array, b, a.loc); }
Array operator-(ArrayAt a) { return bind1(Op::neg, {a.array}, {}, a.loc); }

namespace detail {

Array binary_with_scalar(BinaryOp op, const Array& x, double value, bool is_float, bool scalar_first,
                         const std::source_location& loc) {
  DType d = weak_scalar_dtype(x, is_float, "operator");
  if ((op == BinaryOp::div) && !ir::is_inexact(d)) d = default_float_dtype();
  Array xs = convert(x, d, loc);
  // Eagerly the scalar is made at x's shape at once (one fill, no broadcast op).
  Array s = ir::current_trace() ? scalar(value, d, loc) : full(xs.shape(), value, d, loc);
  Array a = scalar_first ? s : xs, b = scalar_first ? xs : s;
  std::vector<Array> args = promote_and_broadcast(ir::op_name(to_op(op)).data(), {a, b}, loc);
  if (op == BinaryOp::rem) return numpy_remainder(args[0], args[1], loc);
  if (op == BinaryOp::shr) return graft::right_shift(args[0], args[1], loc);
  return bind1(to_op(op), args, {}, loc);
}

}  // namespace detail
}  // namespace graft
