// graft::random: keys, splitting and distributions, lowered to the
// random_bits primitive plus ordinary integer and float ops, so every
// function runs eagerly and traces into graphs alike. Each function draws
// jax.random's numbers for the same key (JAX's default threefry2x32
// implementation, jax_threefry_partitionable on, its default since 0.5):
//   random_bits(k, S + [2]) row i is threefry2x32(k, (hi(i), lo(i))) for the
//           row-major index i of S (interpreter/kernels/random.cpp): JAX's
//           counters, iota_2x32_shape(S).
//   split(k, n)[i] = threefry2x32(k, (0, i)); fold_in(k, d) = threefry2x32(k, (0, d)).
//   bits: 32-bit: the two words of each row xor-ed; 8- and 16-bit: the low
//           bits of that xor; 64-bit: w0 << 32 | w1, as JAX's random bits.
//   uniform f32: (bits >> 9) * 2^-23; f64: the 64 bits (w0 << 32 | w1) >> 12
//           times 2^-52; f16: 16-bit bits >> 6 times 2^-10; bf16: 8-bit bits
//           >> 1 times 2^-7 (JAX draws at least 8 bits); then u * (hi - lo)
//           + lo in the dtype and max(lo, .), as JAX (so hi itself can come
//           out where the product rounds up). The halves' ops round each
//           result, as XLA's CPU code does: JAX's draws exactly.
//   normal: sqrt(2) * erf_inv(u), u uniform in (-1, 1) (nextafter(-1, 0), 1).
//   bernoulli(p): uniform < p in the default float dtype.
//   randint[lo, hi): two draws of the dtype's width (at least 32 bits) from
//           split(k), combined modulo the span by JAX's formula (the
//           multiplier 2^n mod span).
#include "graft/random.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <string>
#include <utility>

#include "api/array_impl.h"
#include "api/dispatch.h"
#include "api/lowering.h"
#include "api/random_keys.h"
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
    throw DTypeError(std::string(fn) + ": dtype must be a float dtype (f16, bf16, f32, f64), got " + dtype_name(dtype) +
                     where(loc));
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

// JAX's 32-bit random bits: the words of each counter's threefry pair xor-ed.
Array bits32(const Array& key, const Shape& shape, const Loc& loc) {
  Array pairs = raw_bits(key, with(shape, 2), loc);
  return bind1(Op::bitwise_xor, {take_last(pairs, 0, loc), take_last(pairs, 1, loc)}, {}, loc);
}

// JAX's random bits of an unsigned dtype (u8, u16, u32 or u64).
Array bits_of(const Array& key, const Shape& shape, DType dtype, const Loc& loc) {
  if (dtype == DType::u32) return bits32(key, shape, loc);
  if (dtype != DType::u64) return detail::convert(bits32(key, shape, loc), dtype, loc);  // the low bits
  Array pairs = raw_bits(key, with(shape, 2), loc);
  Array hi = detail::convert(take_last(pairs, 0, loc), DType::u64, loc);
  Array lo = detail::convert(take_last(pairs, 1, loc), DType::u64, loc);
  return bind1(Op::bitwise_or, {binop(Op::shift_left, hi, 32, loc), lo}, {}, loc);
}

// Uniform [0, 1) from JAX's random bits: exact, see the top of the file.
Array unit(const Array& key, const Shape& shape, DType dtype, const Loc& loc) {
  if (ir::is_half(dtype)) {
    // A mantissa of nmant random bits: the top bits of an at least 8-bit draw.
    const bool f16 = dtype == DType::f16;
    const int nmant = f16 ? 10 : 7, rng_bits = f16 ? 16 : 8;
    Array b = bits_of(key, shape, f16 ? DType::u16 : DType::u8, loc);
    Array m = detail::convert(binop(Op::shift_right_logical, b, rng_bits - nmant, loc), dtype, loc);
    return binop(Op::mul, m, std::ldexp(1.0, -nmant), loc);  // exact
  }
  if (dtype == DType::f32) {
    Array m = detail::convert(binop(Op::div, bits32(key, shape, loc), 512, loc), DType::f32, loc);  // bits >> 9
    return binop(Op::mul, m, 0x1p-23, loc);
  }
  Array pairs = raw_bits(key, with(shape, 2), loc);
  Array hi = detail::convert(take_last(pairs, 0, loc), DType::f64, loc);
  Array lo = detail::convert(binop(Op::div, take_last(pairs, 1, loc), 4096, loc), DType::f64, loc);  // w1 >> 12
  return bind1(Op::add, {binop(Op::mul, hi, 0x1p-32, loc), binop(Op::mul, lo, 0x1p-52, loc)}, {}, loc);
}

double in_dtype(double v, DType dtype) { return detail::round_to_float_dtype(v, dtype); }

// The next number after v toward `toward` in the float dtype (v in the dtype).
double next_in(double v, double toward, DType dtype) {
  if (dtype == DType::f64) return std::nextafter(v, toward);
  if (dtype == DType::f32) return std::nextafter(static_cast<float>(v), static_cast<float>(toward));
  auto step = [&](auto h) {  // a half: step its bit pattern
    using H = decltype(h);
    if (!(v != toward) || std::isnan(v)) return v;
    uint16_t b = h.bits;
    if (v == 0)
      b = toward > 0 ? 1 : 0x8001;
    else if ((v < toward) == (v > 0))
      ++b;
    else
      --b;
    return static_cast<double>(static_cast<float>(H::from_bits(b)));
  };
  return dtype == DType::f16 ? step(float16(static_cast<float>(v))) : step(bfloat16(static_cast<float>(v)));
}

// JAX's uniform on [lo, hi) with lo and hi already in the dtype. XLA's CPU
// code fuses u * span + lo into one multiply-add; in f32 the product is
// exact in f64 and the sum is rounded there, then to f32, which equals the
// fused result but for rare double-rounding ties. In f64 it is two roundings
// (graft has no fused multiply-add op), an ulp of lo apart at most.
Array uniform_in(const Array& key, const Shape& shape, double lo, double hi, DType dtype, const Loc& loc) {
  Array u = unit(key, shape, dtype, loc);
  if (lo == 0 && hi == 1) return u;  // u * 1 + 0 == u, and u >= 0
  const double span = in_dtype(hi - lo, dtype);
  Array x =
      dtype == DType::f32
          ? detail::convert(binop(Op::add, binop(Op::mul, detail::convert(u, DType::f64, loc), span, loc), lo, loc),
                            DType::f32, loc)
          : binop(Op::add, binop(Op::mul, u, span, loc), lo, loc);
  return bind1(Op::max, {const_like(x, lo, dtype, loc), x}, {}, loc);
}

// threefry2x32 of key words (k0, k1) and counter words (x0, x1), all u32 of
// one shape, in graft's u32 ops: wrapping adds, rotations as a wrapping
// multiply by 2^r or-ed with a division by 2^(32-r), xors. The same rounds
// as interpreter/kernels/threefry.h; under jit they fuse into one kernel.
std::pair<Array, Array> threefry_ops(const Array& k0, const Array& k1, Array x0, Array x1, const Loc& loc) {
  constexpr unsigned kRot[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  auto add = [&](const Array& a, const Array& b) { return bind1(Op::add, {a, b}, {}, loc); };
  auto rotl = [&](const Array& x, unsigned r) {
    return bind1(Op::bitwise_or,
                 {binop(Op::mul, x, std::ldexp(1.0, static_cast<int>(r)), loc),
                  binop(Op::div, x, std::ldexp(1.0, static_cast<int>(32 - r)), loc)},
                 {}, loc);
  };
  const Array ks[3] = {k0, k1, binop(Op::bitwise_xor, bind1(Op::bitwise_xor, {k0, k1}, {}, loc), 0x1BD11BDA, loc)};
  x0 = add(x0, ks[0]);
  x1 = add(x1, ks[1]);
  for (unsigned block = 0; block < 5; ++block) {
    for (unsigned r = 0; r < 4; ++r) {
      x0 = add(x0, x1);
      x1 = bind1(Op::bitwise_xor, {rotl(x1, kRot[(block % 2) * 4 + r]), x0}, {}, loc);
    }
    const unsigned s = block + 1;
    x0 = add(x0, ks[s % 3]);
    x1 = binop(Op::add, add(x1, ks[(s + 1) % 3]), s, loc);
  }
  return {x0, x1};
}

// threefry2x32(key, (0, data)) for every key of a batch u32[..., 2]: on the
// host for a concrete key in host memory, else in traced (or device) ops.
Array threefry_of_data(const Array& key, uint32_t data, const Loc& loc) {
  const detail::ArrayImpl& impl = detail::checked_impl(key, "random::fold_in");
  if (!impl.traced() && key.device().kind() == "cpu") {
    std::vector<uint32_t> words = key.to_vector<uint32_t>();
    for (size_t i = 0; i + 1 < words.size(); i += 2) {
      const interpreter::U32x2 out = interpreter::threefry2x32({words[i], words[i + 1]}, {0u, data});
      words[i] = out[0];
      words[i + 1] = out[1];
    }
    return array(words, key.shape(), loc);
  }
  const Array k0 = take_last(key, 0, loc), k1 = take_last(key, 1, loc);
  auto [y0, y1] = threefry_ops(k0, k1, const_like(k0, 0, DType::u32, loc), const_like(k0, data, DType::u32, loc), loc);
  Shape one = k0.shape();
  one.push_back(1);
  auto column = [&](const Array& y) { return bind1(Op::reshape, {y}, {{"new_sizes", ir::Ints(one)}}, loc); };
  return concatenate({column(y0), column(y1)}, static_cast<int>(one.size()) - 1, loc);
}

}  // namespace

Array key(uint64_t seed, Loc loc) {
  return array(std::vector<uint32_t>{static_cast<uint32_t>(seed >> 32), static_cast<uint32_t>(seed)}, {2}, loc);
}

Array bits(const Array& key, Shape shape, DType dtype, Loc loc) {
  check_key("random::bits", key, loc);
  check_shape("random::bits", shape, loc);
  if (!ir::is_unsigned_integer(dtype))
    throw DTypeError(std::string("random::bits: dtype must be u8, u16, u32 or u64, got ") + dtype_name(dtype) +
                     where(loc));
  return bits_of(key, shape, dtype, loc);
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
  return threefry_of_data(key, data, loc);
}

Array uniform(const Array& key, Shape shape, double lo, double hi, DType dtype, Loc loc) {
  const char* fn = "random::uniform";
  check_key(fn, key, loc);
  check_shape(fn, shape, loc);
  check_float(fn, dtype, loc);
  const double lo_t = in_dtype(lo, dtype), hi_t = in_dtype(hi, dtype);
  if (!std::isfinite(lo_t) || !std::isfinite(hi_t) || !(lo_t < hi_t) || !std::isfinite(in_dtype(hi_t - lo_t, dtype)))
    throw Error(std::string(fn) + ": need finite lo < hi whose difference is finite in " + dtype_name(dtype) +
                ", got [" + std::to_string(lo) + ", " + std::to_string(hi) + ")" + where(loc));
  return uniform_in(key, shape, lo_t, hi_t, dtype, loc);
}

// As jax.random.uniform with array bounds: max(lo, u * (hi - lo) + lo) per
// element, the product-sum of f32 in f64 as XLA's fused multiply-add.
Array uniform(const Array& key, Shape shape, const Array& lo, const Array& hi, DType dtype, Loc loc) {
  const char* fn = "random::uniform";
  check_key(fn, key, loc);
  check_float(fn, dtype, loc);
  shape = detail::random_draw_shape(fn, {lo.shape(), hi.shape()}, shape, loc);
  check_shape(fn, shape, loc);
  const Array a = detail::random_param(lo, dtype, shape, loc), b = detail::random_param(hi, dtype, shape, loc);
  const Array u = unit(key, shape, dtype, loc);
  const Array x = dtype == DType::f32
                      ? detail::convert(detail::convert(u, DType::f64, loc) * detail::convert(b - a, DType::f64, loc) +
                                            detail::convert(a, DType::f64, loc),
                                        DType::f32, loc)
                      : u * (b - a) + a;
  return maximum(a, x, loc);
}

Array normal(const Array& key, Shape shape, DType dtype, Loc loc) {
  const char* fn = "random::normal";
  check_key(fn, key, loc);
  check_shape(fn, shape, loc);
  check_float(fn, dtype, loc);
  Array u = uniform_in(key, shape, next_in(-1.0, 0.0, dtype), 1.0, dtype, loc);
  return binop(Op::mul, graft::erf_inv({u, loc}), in_dtype(std::numbers::sqrt2, dtype), loc);
}

Array bernoulli(const Array& key, double p, Shape shape, Loc loc) {
  const char* fn = "random::bernoulli";
  check_key(fn, key, loc);
  check_shape(fn, shape, loc);
  if (!(p >= 0 && p <= 1))
    throw Error(std::string(fn) + ": p must be in [0, 1], got " + std::to_string(p) + where(loc));
  const DType dtype = default_float_dtype();
  return binop(Op::lt, uniform_in(key, shape, 0, 1, dtype, loc), in_dtype(p, dtype), loc);
}

// As jax.random.bernoulli with an array p: uniform in p's float dtype (the
// default float dtype for integer p) below p.
Array bernoulli(const Array& key, const Array& p, Shape shape, Loc loc) {
  const char* fn = "random::bernoulli";
  check_key(fn, key, loc);
  shape = detail::random_draw_shape(fn, {p.shape()}, shape, loc);
  check_shape(fn, shape, loc);
  const DType dtype = ir::is_floating(p.dtype()) ? p.dtype() : default_float_dtype();
  check_float(fn, dtype, loc);
  return unit(key, shape, dtype, loc) < detail::random_param(p, dtype, shape, loc);
}

namespace {

// The range of an integer dtype, as int64 (u64's top is clipped to int64's).
std::pair<int64_t, int64_t> int_range(DType dtype) {
  const int bits = static_cast<int>(ir::dtype_size(dtype)) * 8;
  if (ir::is_unsigned_integer(dtype))
    return {0, bits == 64 ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>((uint64_t{1} << bits) - 1)};
  return {bits == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (bits - 1)),
          bits == 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (bits - 1)) - 1};
}

DType unsigned_of(DType dtype) {
  switch (ir::dtype_size(dtype)) {
    case 1: return DType::u8;
    case 2: return DType::u16;
    case 4: return DType::u32;
    default: return DType::u64;
  }
}

void check_int_dtype(const char* fn, DType dtype, const Loc& loc) {
  if (!ir::is_integer(dtype))
    throw DTypeError(std::string(fn) + ": dtype must be an integer dtype, got " + dtype_name(dtype) + where(loc));
}

// jax.random.randint's draws in an integer dtype of n bits, its i64 bounds
// broadcast to shape: the bounds clipped to the dtype, a span of 1 where
// hi <= lo (lo is drawn), one more where hi is past the dtype's range (2^n
// wraps to 0, and x % 0 leaves x); two n-bit draws from split(key) combined
// modulo the span with the multiplier 2^n mod span, computed as JAX does:
// ((2^(n/2) mod span)^2) mod span, wrapping in n bits.
Array randint_between(const Array& key, const Shape& shape, const Array& lo64, const Array& hi64, DType dtype,
                      const Loc& loc) {
  // Plain names, not a structured binding: the lambdas below capture them, which clang refuses under OpenMP.
  const int64_t kMin = int_range(dtype).first, kMax = int_range(dtype).second;
  if (ir::dtype_size(dtype) < 4) {
    // As JAX: 8- and 16-bit integers are drawn as i32 between the bounds
    // clipped to [min, max + 1] (less biased), then converted.
    auto clip = [&](const Array& b, int64_t top) { return clamp(kMin, b, top, loc); };
    return detail::convert(randint_between(key, shape, clip(lo64, kMax), clip(hi64, kMax + 1), DType::i32, loc), dtype,
                           loc);
  }
  const DType udtype = unsigned_of(dtype);
  const int bits = static_cast<int>(ir::dtype_size(dtype)) * 8;
  auto clip = [&](const Array& b) { return detail::convert(clamp(kMin, b, kMax, loc), dtype, loc); };
  const Array a = clip(lo64), b = clip(hi64);
  Array span = detail::convert(b - a, udtype, loc);  // wraps in the dtype: the unsigned distance
  const Array one = full_like(span, 1);
  span = graft::where(b <= a, one, span, loc);
  if (kMax < std::numeric_limits<int64_t>::max()) {
    const Array hi_out_of_range = hi64 > kMax;  // an integer constant: a float one would compare in f32
    span = graft::where(logical_and(hi_out_of_range, b > a), span + one, span, loc);
  }
  auto rem = [&](const Array& x, const Array& y) { return bind1(Op::rem, {x, y}, {}, loc); };  // x % 0 = x
  Array multiplier = rem(full_like(span, std::ldexp(1.0, bits / 2)), span);
  multiplier = rem(multiplier * multiplier, span);
  std::vector<Array> keys = split(key, 2, loc);
  const Array higher = bits_of(keys[0], shape, udtype, loc), lower = bits_of(keys[1], shape, udtype, loc);
  const Array offset = rem(rem(higher, span) * multiplier + rem(lower, span), span);
  return a + detail::convert(offset, dtype, loc);
}

// A scalar i64 constant broadcast to shape (exact: no trip through a double).
Array i64_full(int64_t v, const Shape& shape, const Loc& loc) {
  return detail::broadcast_to_shape(array(std::vector<int64_t>{v}, Shape{}, loc), shape, loc);
}

}  // namespace

Array randint(const Array& key, Shape shape, int64_t lo, int64_t hi, DType dtype, Loc loc) {
  const char* fn = "random::randint";
  check_key(fn, key, loc);
  check_shape(fn, shape, loc);
  check_int_dtype(fn, dtype, loc);
  const auto [kMin, kMax] = int_range(dtype);
  if (!(lo < hi) || lo < kMin || (kMax < std::numeric_limits<int64_t>::max() && hi > kMax + 1))
    throw Error(std::string(fn) + ": need lo < hi within the " + dtype_name(dtype) + " range (hi exclusive, at most " +
                std::to_string(kMax) + " + 1), got [" + std::to_string(lo) + ", " + std::to_string(hi) + ")" +
                where(loc));
  return randint_between(key, shape, i64_full(lo, shape, loc), i64_full(hi, shape, loc), dtype, loc);
}

// As jax.random.randint with array bounds (integers, or floats truncated),
// clipped to the dtype's range; where hi <= lo the draw is lo.
Array randint(const Array& key, Shape shape, const Array& lo, const Array& hi, DType dtype, Loc loc) {
  const char* fn = "random::randint";
  check_key(fn, key, loc);
  check_int_dtype(fn, dtype, loc);
  for (const Array* b : {&lo, &hi})
    if (!ir::is_integer(b->dtype()) && !ir::is_floating(b->dtype()))
      throw DTypeError(std::string(fn) + ": bounds must be numbers, got " + detail::describe(*b) + where(loc));
  shape = detail::random_draw_shape(fn, {lo.shape(), hi.shape()}, shape, loc);
  check_shape(fn, shape, loc);
  // Bounds in i64 (floats truncated, as JAX's astype(int); u64 ones past int64 clipped first).
  auto as_i64 = [&](Array b) {
    if (b.dtype() == DType::u64)
      b = minimum(b, array(std::vector<uint64_t>{uint64_t{std::numeric_limits<int64_t>::max()}}, Shape{}, loc), loc);
    return detail::random_param(b, DType::i64, shape, loc);
  };
  return randint_between(key, shape, as_i64(lo), as_i64(hi), dtype, loc);
}

namespace {

// The float dtype's facts JAX's samplers use (numpy.finfo).
double tiny_of(DType dtype) {  // the smallest normal
  return dtype == DType::f16 ? 0x1p-14 : dtype == DType::bf16 || dtype == DType::f32 ? 0x1p-126 : 0x1p-1022;
}
double epsneg_of(DType dtype) { return detail::eps_of(dtype) / 2; }  // 1's ulp below

// The checks every float sampler makes.
void check_sampler(const char* fn, const Array& key, const Shape& shape, DType dtype, const Loc& loc) {
  check_key(fn, key, loc);
  check_shape(fn, shape, loc);
  check_float(fn, dtype, loc);
}

// erf(v) of a host number as the backends compute it per element (the C library's, in the dtype).
double erf_in(double v, DType dtype) {
  return dtype == DType::f64 ? std::erf(v) : in_dtype(std::erf(static_cast<float>(v)), dtype);  // halves: in f32
}

}  // namespace

Array truncated_normal(const Array& key, double lower, double upper, Shape shape, DType dtype, Loc loc) {
  const char* fn = "random::truncated_normal";
  check_sampler(fn, key, shape, dtype, loc);
  const double lo = in_dtype(lower, dtype), hi = in_dtype(upper, dtype), sqrt2 = in_dtype(std::numbers::sqrt2, dtype);
  if (std::isnan(lo) || std::isnan(hi) || !(lo < hi))
    throw Error(std::string(fn) + ": need lower < upper, got (" + std::to_string(lower) + ", " + std::to_string(upper) +
                ")" + where(loc));
  // As JAX: u uniform between erf(lower / sqrt 2) and erf(upper / sqrt 2), each rounded to the dtype.
  const double a = erf_in(in_dtype(lo / sqrt2, dtype), dtype), b = erf_in(in_dtype(hi / sqrt2, dtype), dtype);
  Array out = binop(Op::mul, graft::erf_inv({uniform_in(key, shape, a, b, dtype, loc), loc}), sqrt2, loc);
  const double inf = std::numeric_limits<double>::infinity();
  const double above = next_in(lo, inf, dtype), below = next_in(hi, -inf, dtype);
  Array floor = bind1(Op::max, {out, const_like(out, above, dtype, loc)}, {}, loc);
  return bind1(Op::min, {floor, const_like(out, below, dtype, loc)}, {}, loc);
}

// The same with lower and upper Arrays, as jax.random.truncated_normal with
// array bounds: u uniform between erf(lower/sqrt 2) and erf(upper/sqrt 2)
// per element (their product-sum in f64 for f32, as XLA's fused
// multiply-add), clipped into (nextafter(lower, inf), nextafter(upper, -inf)).
Array truncated_normal(const Array& key, const Array& lower, const Array& upper, Shape shape, DType dtype, Loc loc) {
  const char* fn = "random::truncated_normal";
  check_key(fn, key, loc);
  check_float(fn, dtype, loc);
  shape = detail::random_draw_shape(fn, {lower.shape(), upper.shape()}, shape, loc);
  check_sampler(fn, key, shape, dtype, loc);
  const Array lo = detail::broadcast_to_shape(detail::convert(lower, dtype, loc), shape, loc);
  const Array hi = detail::broadcast_to_shape(detail::convert(upper, dtype, loc), shape, loc);
  const double sqrt2 = in_dtype(std::numbers::sqrt2, dtype);
  const Array a = graft::erf({binop(Op::div, lo, sqrt2, loc), loc}),
              b = graft::erf({binop(Op::div, hi, sqrt2, loc), loc});
  const Array u = unit(key, shape, dtype, loc);
  const Array span = b - a;
  Array x = dtype == DType::f32
                ? detail::convert(detail::convert(u, DType::f64, loc) * detail::convert(span, DType::f64, loc) +
                                      detail::convert(a, DType::f64, loc),
                                  DType::f32, loc)
                : u * span + a;
  x = maximum(a, x, loc);
  const Array out = binop(Op::mul, graft::erf_inv({x, loc}), sqrt2, loc);
  const double inf = std::numeric_limits<double>::infinity();
  const Array above = nextafter(stop_gradient(lo), full_like(lo, inf), loc);
  const Array below = nextafter(stop_gradient(hi), full_like(hi, -inf), loc);
  return minimum(maximum(out, above, loc), below, loc);
}

Array exponential(const Array& key, Shape shape, DType dtype, Loc loc) {
  check_sampler("random::exponential", key, shape, dtype, loc);
  Array u = uniform_in(key, shape, 0, 1, dtype, loc);
  return bind1(Op::neg, {graft::log1p({bind1(Op::neg, {u}, {}, loc), loc})}, {}, loc);
}

Array gumbel(const Array& key, Shape shape, DType dtype, Loc loc) {
  check_sampler("random::gumbel", key, shape, dtype, loc);
  Array u = uniform_in(key, shape, tiny_of(dtype), 1, dtype, loc);
  Array inner = bind1(Op::neg, {graft::log({u, loc})}, {}, loc);
  return bind1(Op::neg, {graft::log({inner, loc})}, {}, loc);
}

Array laplace(const Array& key, Shape shape, DType dtype, Loc loc) {
  check_sampler("random::laplace", key, shape, dtype, loc);
  Array u = uniform_in(key, shape, -1 + epsneg_of(dtype), 1, dtype, loc);
  Array magnitude = graft::log1p({bind1(Op::neg, {graft::abs({u, loc})}, {}, loc), loc});
  return bind1(Op::mul, {graft::sign({u, loc}), magnitude}, {}, loc);
}

Array logistic(const Array& key, Shape shape, DType dtype, Loc loc) {
  check_sampler("random::logistic", key, shape, dtype, loc);
  Array u = uniform_in(key, shape, tiny_of(dtype), 1, dtype, loc);
  return bind1(Op::sub, {graft::log({u, loc}), graft::log1p({bind1(Op::neg, {u}, {}, loc), loc})}, {}, loc);
}

Array cauchy(const Array& key, Shape shape, DType dtype, Loc loc) {
  check_sampler("random::cauchy", key, shape, dtype, loc);
  Array u = uniform_in(key, shape, detail::eps_of(dtype), 1, dtype, loc);
  return graft::tan({binop(Op::mul, binop(Op::sub, u, 0.5, loc), in_dtype(std::numbers::pi, dtype), loc), loc});
}

Array rademacher(const Array& key, Shape shape, DType dtype, Loc loc) {
  const char* fn = "random::rademacher";
  check_key(fn, key, loc);
  check_shape(fn, shape, loc);
  if (dtype == DType::bool_ || dtype == DType::u32)
    throw DTypeError(std::string(fn) + ": dtype must hold -1, got " + dtype_name(dtype) + where(loc));
  Array b = detail::convert(bernoulli(key, 0.5, shape, loc), dtype, loc);
  return binop(Op::sub, binop(Op::mul, b, 2, loc), 1, loc);
}

Array categorical(const Array& key, const Array& logits, int axis, Shape shape, Loc loc) {
  const char* fn = "random::categorical";
  check_key(fn, key, loc);
  const Shape& ls = logits.shape();
  const int rank = static_cast<int>(ls.size());
  if (!ir::is_floating(logits.dtype()))
    throw DTypeError(std::string(fn) + ": logits must be f32 or f64, got " +
                     ir::type_str(detail::checked_impl(logits, fn).type) + where(loc));
  if (rank == 0 || axis < -rank || axis >= rank)
    throw ShapeError(std::string(fn) + ": axis " + std::to_string(axis) + " is out of range for logits of shape " +
                     ir::shape_str(ls) + where(loc));
  const int ax = axis < 0 ? axis + rank : axis;
  Shape batch = ls;
  batch.erase(batch.begin() + ax);
  if (shape.empty()) shape = batch;
  check_shape(fn, shape, loc);
  if (shape.size() < batch.size() ||
      !std::equal(batch.begin(), batch.end(), shape.end() - static_cast<std::ptrdiff_t>(batch.size())))
    throw ShapeError(std::string(fn) + ": shape " + ir::shape_str(shape) + " must end with the logits' batch shape " +
                     ir::shape_str(batch) + where(loc));
  const size_t prefix = shape.size() - batch.size();
  // As JAX: gumbel noise of shape prefix + logits.shape, logits broadcast over the prefix, argmax along axis.
  Shape noise_shape(shape.begin(), shape.begin() + static_cast<std::ptrdiff_t>(prefix));
  noise_shape.insert(noise_shape.end(), ls.begin(), ls.end());
  Array noisy = bind1(
      Op::add, {gumbel(key, noise_shape, logits.dtype(), loc), detail::broadcast_to_shape(logits, noise_shape, loc)},
      {}, loc);
  return argmax(noisy, static_cast<int>(prefix) + ax, loc);
}

namespace {

// One key, u32[2]: the samplers that reorder data take no batch of keys.
void check_single_key(const char* fn, const Array& key, const Loc& loc) {
  check_key(fn, key, loc);
  if (key.shape() != Shape{2})
    throw ShapeError(std::string(fn) + ": needs one key, u32[2], got " + ir::shape_str(key.shape()) +
                     " (vmap over a batch of keys)" + where(loc));
}

// JAX's _shuffle: ceil(3 ln(size) / ln(2^32 - 1)) rounds, each a stable sort of x along axis by
// fresh 32-bit keys from the second half of a split, the first half carried to the next round.
Array shuffle(Array key, Array x, int axis, const Loc& loc) {
  const double size = std::max<double>(1, static_cast<double>(x.size()));
  const int rounds = static_cast<int>(std::ceil(3 * std::log(size) / std::log(4294967295.0)));
  for (int r = 0; r < rounds; ++r) {
    std::vector<Array> keys = split(key, 2, loc);
    key = keys[0];
    Array sort_keys = bits32(keys[1], x.shape(), loc);
    x = detail::bind(Op::sort, {sort_keys, x},
                     {{"dimension", int64_t{axis}}, {"num_keys", int64_t{1}}, {"is_stable", int64_t{1}}}, loc)[1];
  }
  return x;
}

}  // namespace

Array permutation(const Array& key, int64_t n, Loc loc) {
  const char* fn = "random::permutation";
  check_single_key(fn, key, loc);
  if (n < 0 || n > std::numeric_limits<int32_t>::max())
    throw ShapeError(std::string(fn) + ": n must be in [0, 2^31), got " + std::to_string(n) + where(loc));
  Array x =
      detail::bind1(Op::iota, {}, {{"dtype", DType::i32}, {"shape", ir::Ints{n}}, {"dimension", int64_t{0}}}, loc);
  return shuffle(key, x, 0, loc);
}

Array permutation(const Array& key, const Array& x, int axis, Loc loc) {
  const char* fn = "random::permutation";
  check_single_key(fn, key, loc);
  const int rank = static_cast<int>(x.ndim());
  if (rank == 0) throw ShapeError(std::string(fn) + ": x must have at least one axis" + where(loc));
  if (axis < -rank || axis >= rank)
    throw ShapeError(std::string(fn) + ": axis " + std::to_string(axis) + " is out of range for shape " +
                     ir::shape_str(x.shape()) + where(loc));
  const int a = axis < 0 ? axis + rank : axis;
  if (rank == 1) return shuffle(key, x, 0, loc);
  // As JAX: a permutation of the indices along axis, then a gather of those slices.
  return take(x, permutation(key, x.shape()[static_cast<size_t>(a)], loc), a, loc);
}

}  // namespace graft::random

namespace graft::detail {

Array random_split_keys(const Array& key, int64_t n, const std::source_location& loc) {
  return random::raw_bits(key, {n, 2}, loc);
}

Shape random_draw_shape(const char* fn, const std::vector<Shape>& params, const Shape& shape,
                        const std::source_location& loc) {
  const Shape joint = broadcast_shapes(fn, params, loc);
  if (shape.empty()) return joint;
  if (broadcast_shapes(fn, std::vector<Shape>{joint, shape}, loc) != shape)
    throw ShapeError(std::string(fn) + ": parameters of shape " + ir::shape_str(joint) +
                     " do not broadcast to the requested shape " + ir::shape_str(shape) + where(loc));
  return shape;
}

Array random_param(const Array& p, DType dtype, const Shape& shape, const std::source_location& loc) {
  return broadcast_to_shape(convert(p, dtype, loc), shape, loc);
}

}  // namespace graft::detail
