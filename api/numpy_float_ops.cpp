// NumPy's float predicates and repairs (isnan, isinf, nan_to_num), logaddexp
// and lax.clamp, composed of graft's ops with JAX's derivatives.
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <utility>

#include "api/lowering.h"
#include "graft/autodiff.h"
#include "graft/errors.h"
#include "graft/ops.h"
#include "ir/dtype.h"

namespace graft {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

bool is_float(const Array& x) { return ir::is_floating(x.dtype()); }

// Infinities of a float array compared through equality, which integer and
// bool arrays never satisfy.
Array equals_value(const ArrayAt& x, double value) {
  if (!is_float(x.array)) return zeros_like(x.array, DType::bool_, x.loc);
  return where(x.array == value, ones_like(x.array, DType::bool_, x.loc), zeros_like(x.array, DType::bool_, x.loc),
               x.loc);
}

}  // namespace

Array isnan(ArrayAt x) {
  if (!is_float(x.array)) return zeros_like(x.array, DType::bool_, x.loc);
  return x.array != x.array;
}
Array isposinf(ArrayAt x) { return equals_value(x, kInf); }
Array isneginf(ArrayAt x) { return equals_value(x, -kInf); }
Array isinf(ArrayAt x) { return logical_or(isposinf(x), isneginf(x), x.loc); }

Array nan_to_num(const Array& x, double nan, std::optional<double> posinf, std::optional<double> neginf, Loc loc) {
  if (!is_float(x)) return x;
  const bool f32 = x.dtype() == DType::f32;
  const double hi = posinf ? *posinf : f32 ? std::numeric_limits<float>::max() : std::numeric_limits<double>::max();
  const double lo = neginf ? *neginf : -hi;
  Array out = where(x != x, full_like(x, nan, {}, loc), x, loc);
  out = where(out == kInf, full_like(x, hi, {}, loc), out, loc);
  return where(out == -kInf, full_like(x, lo, {}, loc), out, loc);
}

// amax + log1p(e^-|x - y|); x + y where x - y is NaN (a NaN, or infinities of
// one sign). The derivative e^(x - out) t_x + e^(y - out) t_y, with +inf read
// as 0 so that logaddexp(inf, inf) has a finite one, as JAX's.
Array logaddexp(const Array& x, const Array& y, Loc loc) {
  std::vector<Array> v = detail::promote_and_broadcast("logaddexp", {x, y}, loc);
  for (Array& a : v)
    if (!is_float(a)) a = detail::convert(a, default_float_dtype(), loc);
  auto value = [](const Array& a, const Array& b) {
    const Array delta = a - b;
    // -|delta| as min(delta, -delta): its even split at a tie keeps the derivative 1/2 at a == b.
    return where(delta != delta, a + b, maximum(a, b) + log1p(exp(minimum(delta, -delta))));
  };
  auto finite = [](const Array& a) { return where(a == kInf, zeros_like(a), a); };
  using Pair = std::tuple<Array, Array>;
  auto fn = custom_jvp(value, [value, finite](const Pair& p, const Pair& t) {
    const Array &a = std::get<0>(p), &b = std::get<1>(p);
    const Array out = value(a, b);
    return std::make_pair(
        out, std::get<0>(t) * exp(finite(a) - finite(out)) + std::get<1>(t) * exp(finite(b) - finite(out)));
  });
  return fn(v[0], v[1]);
}

Array clamp(const Array& lo, const Array& x, const Array& hi, Loc loc) {
  std::vector<Array> v = detail::promote_and_broadcast("clamp", {lo, x, hi}, loc);
  auto value = [](const Array& l, const Array& a, const Array& h) { return minimum(maximum(a, l), h); };
  if (!is_float(v[1])) return value(v[0], v[1], v[2]);
  using Triple = std::tuple<Array, Array, Array>;
  auto fn = custom_jvp(value, [value](const Triple& p, const Triple& t) {
    const Array &l = std::get<0>(p), &a = std::get<1>(p), &h = std::get<2>(p);
    const Array zero = zeros_like(a);
    const Array dl = where(logical_and(l > a, l < h), std::get<0>(t), zero);
    const Array da = where(logical_and(a > l, a < h), std::get<1>(t), zero);
    const Array dh = where(h < a, std::get<2>(t), zero);
    return std::make_pair(value(l, a, h), dl + da + dh);
  });
  return fn(v[0], v[1], v[2]);
}

namespace {

// XLA's ReducePrecision on the bits (as unsigned for f32, two's complement
// for f64, where + and & agree): round the mantissa to nearest, ties to an
// even last kept bit; then exponents beyond the narrower range become
// infinity (above) or a signed zero (below: no subnormals); NaN stays NaN.
Array reduce_precision_bits(const Array& x, int exponent_bits, int mantissa_bits, const Loc& loc) {
  const bool f32 = x.dtype() == DType::f32;
  const DType bits_type = f32 ? DType::u32 : DType::i64;
  const int src_mantissa = f32 ? 23 : 52, src_exponent = f32 ? 8 : 11;
  auto k = [&](uint64_t v) { return full({}, static_cast<double>(static_cast<int64_t>(v)), bits_type, loc); };
  auto kbits = [&](uint64_t v) {  // constants beyond 2^53 go through their bits
    return f32 ? k(v) : bitcast(full({}, std::bit_cast<double>(v), DType::f64, loc), DType::i64, loc);
  };
  Array b = bitcast(x, bits_type, loc);
  if (mantissa_bits < src_mantissa) {
    const int drop = src_mantissa - mantissa_bits;
    const uint64_t last = uint64_t{1} << drop;
    const Array last_bit = right_shift(bitwise_and(b, kbits(last), loc), drop, loc);
    const Array bias = last_bit + kbits((last >> 1) - 1);
    b = bitwise_and(b + bias, kbits(~(last - 1) & (f32 ? 0xffffffffull : ~0ull)), loc);
  }
  if (exponent_bits < src_exponent) {
    const uint64_t sign = uint64_t{1} << (f32 ? 31 : 63);
    const uint64_t exp_mask = ((uint64_t{1} << src_exponent) - 1) << src_mantissa;
    const int64_t bias = (int64_t{1} << (src_exponent - 1)) - 1, reduced = (int64_t{1} << (exponent_bits - 1)) - 1;
    const Array e = bitwise_and(b, kbits(exp_mask), loc);
    const Array over = e > kbits(static_cast<uint64_t>(bias + reduced) << src_mantissa);
    const Array under = e <= kbits(static_cast<uint64_t>(bias - reduced) << src_mantissa);
    const Array signed_zero = bitwise_and(b, kbits(sign), loc);
    const Array signed_inf = bitwise_or(signed_zero, kbits(exp_mask), loc);
    b = where(over, signed_inf, where(under, signed_zero, b, loc), loc);
  }
  const Array out = bitcast(b, x.dtype(), loc);
  return where(x != x, x, out, loc);
}

}  // namespace

Array reduce_precision(const Array& x, int exponent_bits, int mantissa_bits, Loc loc) {
  if (!is_float(x))
    throw DTypeError("reduce_precision: needs a float array, got " + detail::describe(x) + detail::where(loc));
  if (exponent_bits < 1 || mantissa_bits < 0)
    throw Error("reduce_precision: needs exponent_bits >= 1 and mantissa_bits >= 0, got " +
                std::to_string(exponent_bits) + " and " + std::to_string(mantissa_bits) + detail::where(loc));
  auto value = [exponent_bits, mantissa_bits, loc](const Array& v) {
    return reduce_precision_bits(v, exponent_bits, mantissa_bits, loc);
  };
  // The tangent passes through unrounded: JAX rounds it alike (its primitive
  // is linear), which graft's bit operations cannot transpose; the two agree
  // wherever the tangent is representable in the narrow format.
  auto fn = custom_jvp(value, [value](const std::tuple<Array>& p, const std::tuple<Array>& t) {
    return std::make_pair(value(std::get<0>(p)), std::get<0>(t));
  });
  return fn(x);
}

Array clamp(double lo, const Array& x, double hi, Loc loc) {
  return clamp(full_like(x, lo, {}, loc), x, full_like(x, hi, {}, loc), loc);
}

}  // namespace graft
