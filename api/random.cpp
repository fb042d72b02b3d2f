// graft::random: keys, splitting and distributions, lowered to the
// random_bits primitive plus ordinary integer and float ops, so every
// function runs eagerly and traces into graphs alike.
//
// How values are formed from random_bits words (all exact, no rounding):
//   uniform f32: (w / 2^9) * 2^-23            — 23 random mantissa bits in [0, 1)
//   uniform f64: (w0 / 2^12) * 2^-20 + w1 * 2^-52 — 52 random bits in [0, 1)
//   then lo + u * (hi - lo), clipped into [lo, hi) as representable in the dtype.
//   normal: Box–Muller, sqrt(-2 log(1 - u1)) * cos(2 pi u2) with u1, u2 two
//           independent uniforms per element (1 - u1 lies in (0, 1]).
//   bernoulli(p): w < round(p * 2^32)  (resolution 2^-32).
//   randint[lo, hi): ((w0 / 2) * 2^32 + w1) mod (hi - lo) in i64, a 63-bit
//           draw, so the modulo bias is below 2^-31.
#include "graft/random.h"

#include <cmath>
#include <limits>
#include <numbers>
#include <string>
#include <utility>

#include "api/array_impl.h"
#include "api/dispatch.h"
#include "api/lowering.h"
#include "graft/errors.h"
#include "graft/ops.h"
#include "interpreter/kernels/threefry.h"
#include "ir/value.h"

namespace graft::random {
namespace {

using Loc = std::source_location;
using ir::Op;
using detail::bind1;
using detail::where;

void check_key(const char* fn, const Array& key, const Loc& loc) {
  const ir::ValueType& t = detail::checked_impl(key, fn).type;
  std::string what = std::string(fn) + ": key must be a u32[2] array (or a batch u32[..., 2]) made by random::key, "
                     "random::split or random::fold_in; got " + ir::type_str(t) + where(loc);
  if (t.dtype != DType::u32) throw DTypeError(what);
  if (t.shape.empty() || t.shape.back() != 2) throw ShapeError(what);
}

void check_shape(const char* fn, const Shape& shape, const Loc& loc) {
  for (int64_t d : shape)
    if (d < 0 || d > ir::kMaxDim) throw ShapeError(std::string(fn) + ": invalid shape " + ir::shape_str(shape) + where(loc));
}

void check_float(const char* fn, DType dtype, const Loc& loc) {
  if (!ir::is_floating(dtype))
    throw DTypeError(std::string(fn) + ": dtype must be f32 or f64, got " + dtype_name(dtype) + where(loc));
}

Shape with(Shape shape, int64_t last) {
  shape.push_back(last);
  return shape;
}

Array raw_bits(const Array& key, const Shape& shape, const Loc& loc) {
  return bind1(Op::random_bits, {key}, {{"shape", ir::Ints(shape)}}, loc);
}

// A constant of x's shape and the given dtype.
Array const_like(const Array& x, double value, DType dtype, const Loc& loc) {
  return detail::broadcast_to_shape(scalar(value, dtype, loc), x.shape(), loc);
}

Array binop(Op op, const Array& x, double value, const Loc& loc) {
  return bind1(op, {x, const_like(x, value, x.dtype(), loc)}, {}, loc);
}

// x[..., i] of the last axis, which is dropped.
Array take_last(const Array& x, int64_t i, const Loc& loc) {
  const Shape& s = x.shape();
  const size_t r = s.size();
  ir::Ints start(r, 0), limit(s.begin(), s.end()), strides(r, 1);
  start[r - 1] = i;
  limit[r - 1] = i + 1;
  Array sl = bind1(Op::slice, {x}, {{"start_indices", start}, {"limit_indices", limit}, {"strides", strides}}, loc);
  return bind1(Op::reshape, {sl}, {{"new_sizes", ir::Ints(s.begin(), s.end() - 1)}}, loc);
}

// Uniform [0, 1) from one word (f32) or two words (f64); exact, see the top of the file.
Array unit_f32(const Array& w, const Loc& loc) {
  Array m = detail::convert(binop(Op::div, w, 512, loc), DType::f32, loc);  // w >> 9
  return binop(Op::mul, m, 0x1p-23, loc);
}
Array unit_f64(const Array& w0, const Array& w1, const Loc& loc) {
  Array hi = detail::convert(binop(Op::div, w0, 4096, loc), DType::f64, loc);  // w0 >> 12
  Array lo = detail::convert(w1, DType::f64, loc);
  return bind1(Op::add, {binop(Op::mul, hi, 0x1p-20, loc), binop(Op::mul, lo, 0x1p-52, loc)}, {}, loc);
}

// `count` independent uniforms in [0, 1) of key.shape[:-1] + shape each.
std::vector<Array> units(const Array& key, const Shape& shape, DType dtype, int count, const Loc& loc) {
  const int per = dtype == DType::f64 ? 2 : 1;
  Array w = raw_bits(key, with(shape, int64_t{count} * per), loc);
  std::vector<Array> out;
  for (int c = 0; c < count; ++c)
    out.push_back(per == 1 ? unit_f32(take_last(w, c, loc), loc)
                           : unit_f64(take_last(w, 2 * c, loc), take_last(w, 2 * c + 1, loc), loc));
  return out;
}

// The smallest value >= lo and the largest value < hi representable in dtype.
std::pair<double, double> float_bounds(DType dtype, double lo, double hi) {
  if (dtype == DType::f32) {
    float l = static_cast<float>(lo), h = static_cast<float>(hi);
    if (static_cast<double>(l) < lo) l = std::nextafter(l, std::numeric_limits<float>::infinity());
    if (static_cast<double>(h) >= hi) h = std::nextafter(h, -std::numeric_limits<float>::infinity());
    return {l, h};
  }
  return {lo, std::nextafter(hi, -std::numeric_limits<double>::infinity())};
}

// A fixed key for mixing fold_in's data (the golden-ratio words, arbitrary but fixed).
constexpr interpreter::U32x2 kFoldInKey = {0x9E3779B9u, 0x7F4A7C15u};

}  // namespace

Array key(uint64_t seed, Loc loc) {
  return array(std::vector<uint32_t>{static_cast<uint32_t>(seed >> 32), static_cast<uint32_t>(seed)}, {2}, loc);
}

Array bits(const Array& key, Shape shape, Loc loc) {
  check_key("random::bits", key, loc);
  check_shape("random::bits", shape, loc);
  return raw_bits(key, shape, loc);
}

std::vector<Array> split(const Array& key, int n, Loc loc) {
  check_key("random::split", key, loc);
  if (n < 0) throw ShapeError("random::split: the number of keys must be >= 0, got " + std::to_string(n) + where(loc));
  Array children = raw_bits(key, {n, 2}, loc);  // key.shape[:-1] + [n, 2]
  const Shape& s = children.shape();
  const size_t axis = s.size() - 2;
  Shape out_shape(s.begin(), s.end());
  out_shape.erase(out_shape.begin() + static_cast<std::ptrdiff_t>(axis));
  std::vector<Array> out;
  out.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    ir::Ints start(s.size(), 0), limit(s.begin(), s.end()), strides(s.size(), 1);
    start[axis] = i;
    limit[axis] = i + 1;
    Array row =
        bind1(Op::slice, {children}, {{"start_indices", start}, {"limit_indices", limit}, {"strides", strides}}, loc);
    out.push_back(bind1(Op::reshape, {row}, {{"new_sizes", ir::Ints(out_shape)}}, loc));
  }
  return out;
}

Array fold_in(const Array& key, uint32_t data, Loc loc) {
  check_key("random::fold_in", key, loc);
  // The data is a host value: hash it to 64 bits here, mix it into the key,
  // and draw the new key from the mixed one.
  const interpreter::U32x2 h = interpreter::threefry2x32(kFoldInKey, {0u, data});
  Array mix = detail::broadcast_to_shape(array(std::vector<uint32_t>{h[0], h[1]}, {2}, loc), key.shape(), loc);
  Array mixed = bind1(Op::bitwise_xor, {key, mix}, {}, loc);
  return raw_bits(mixed, {2}, loc);
}

Array uniform(const Array& key, Shape shape, double lo, double hi, DType dtype, Loc loc) {
  const char* fn = "random::uniform";
  check_key(fn, key, loc);
  check_shape(fn, shape, loc);
  check_float(fn, dtype, loc);
  if (!std::isfinite(lo) || !std::isfinite(hi) || !(lo < hi))
    throw Error(std::string(fn) + ": need finite lo < hi, got [" + std::to_string(lo) + ", " + std::to_string(hi) +
                ")" + where(loc));
  auto [lo_t, hi_t] = float_bounds(dtype, lo, hi);
  const double span = hi - lo;
  if (lo_t > hi_t || (dtype == DType::f32 && span > std::numeric_limits<float>::max()))
    throw Error(std::string(fn) + ": the interval [" + std::to_string(lo) + ", " + std::to_string(hi) +
                ") cannot be sampled in " + dtype_name(dtype) + where(loc));
  Array u = units(key, shape, dtype, 1, loc)[0];
  if (lo == 0 && hi == 1) return u;  // already exactly in [0, 1)
  Array x = binop(Op::add, binop(Op::mul, u, span, loc), lo, loc);
  return clip(x, lo_t, hi_t, loc);
}

Array normal(const Array& key, Shape shape, DType dtype, Loc loc) {
  const char* fn = "random::normal";
  check_key(fn, key, loc);
  check_shape(fn, shape, loc);
  check_float(fn, dtype, loc);
  std::vector<Array> u = units(key, shape, dtype, 2, loc);
  // Box–Muller: 1 - u1 is in (0, 1], so the log is finite.
  Array one_minus = bind1(Op::sub, {const_like(u[0], 1.0, dtype, loc), u[0]}, {}, loc);
  Array radius = graft::sqrt({binop(Op::mul, graft::log({one_minus, loc}), -2.0, loc), loc});
  Array angle = graft::cos({binop(Op::mul, u[1], 2.0 * std::numbers::pi, loc), loc});
  return bind1(Op::mul, {radius, angle}, {}, loc);
}

Array bernoulli(const Array& key, double p, Shape shape, Loc loc) {
  const char* fn = "random::bernoulli";
  check_key(fn, key, loc);
  check_shape(fn, shape, loc);
  if (!(p >= 0 && p <= 1))
    throw Error(std::string(fn) + ": p must be in [0, 1], got " + std::to_string(p) + where(loc));
  Array w = raw_bits(key, shape, loc);
  const double t = std::round(p * 0x1p32);  // P(w < t) = t / 2^32
  if (t >= 0x1p32) return binop(Op::le, w, 4294967295.0, loc);  // p == 1 (or within 2^-33 of it): always true
  return binop(Op::lt, w, t, loc);
}

Array randint(const Array& key, Shape shape, int64_t lo, int64_t hi, Loc loc) {
  const char* fn = "random::randint";
  check_key(fn, key, loc);
  check_shape(fn, shape, loc);
  constexpr int64_t kMin = std::numeric_limits<int32_t>::min(), kMax = std::numeric_limits<int32_t>::max();
  if (!(lo < hi) || lo < kMin || hi > kMax + int64_t{1})
    throw Error(std::string(fn) + ": need lo < hi within the i32 range (hi exclusive, at most 2^31), got [" +
                std::to_string(lo) + ", " + std::to_string(hi) + ")" + where(loc));
  Array w = raw_bits(key, with(shape, 2), loc);
  Array high = detail::convert(binop(Op::div, take_last(w, 0, loc), 2, loc), DType::i64, loc);  // 31 bits
  Array low = detail::convert(take_last(w, 1, loc), DType::i64, loc);                            // 32 bits
  Array v = bind1(Op::add, {binop(Op::mul, high, 0x1p32, loc), low}, {}, loc);                 // [0, 2^63)
  Array r = binop(Op::rem, v, static_cast<double>(hi - lo), loc);
  return detail::convert(binop(Op::add, r, static_cast<double>(lo), loc), DType::i32, loc);
}

}  // namespace graft::random
