// random::poisson, as jax.random.poisson: Knuth's product of uniforms for
// rates below 10 and Hormann's transformed rejection with squeeze (PTRS)
// above, both over the whole shape in f32 with JAX's keys, the result
// chosen per element. The same steps as JAX, so the same draws but where
// an accept test rounds the other way (XLA's own f32 log and lgamma).
#include <limits>
#include <tuple>

#include "api/lowering.h"
#include "graft/control_flow.h"
#include "graft/errors.h"
#include "graft/ops.h"
#include "graft/random.h"
#include "graft/special.h"

namespace graft::random {

namespace {

using Loc = std::source_location;

Array knuth(const Array& key, const Array& lam, DType dtype, const Loc& loc) {
  using Carry = std::tuple<Array, Array, Array>;  // k, rng, log of the product
  auto more = [&](const Carry& c) { return any(std::get<2>(c) > -lam, {}, false, loc); };
  auto step = [&](const Carry& c) {
    std::vector<Array> keys = split(std::get<1>(c), 2, loc);
    const Array& log_prod = std::get<2>(c);
    const Array k = where(log_prod > -lam, std::get<0>(c) + 1, std::get<0>(c), loc);
    const Array u = uniform(keys[1], lam.shape(), 0, 1, DType::f32, loc);
    return Carry{k, keys[0], log_prod + log(u)};
  };
  const Carry init{zeros(lam.shape(), dtype, loc), key, zeros(lam.shape(), DType::f32, loc)};
  return std::get<0>(while_loop(more, step, init, loc)) - 1;
}

Array rejection(const Array& key, const Array& lam, DType dtype, const Loc& loc) {
  const Array log_lam = log(lam);
  const Array b = 0.931f + 2.53f * sqrt(lam);
  const Array a = -0.059f + 0.02483f * b;
  const Array inv_alpha = 1.1239f + 1.1328f / (b - 3.4f);
  const Array v_r = 0.9277f - 3.6224f / (b - 2.0f);
  using Carry = std::tuple<Array, Array, Array>;  // k, accepted, key
  auto more = [&](const Carry& c) { return any(~std::get<1>(c), {}, false, loc); };
  auto step = [&](const Carry& c) {
    std::vector<Array> keys = split(std::get<2>(c), 3, loc);
    const Array u = uniform(keys[1], lam.shape(), 0, 1, DType::f32, loc) - 0.5f;
    const Array v = uniform(keys[2], lam.shape(), 0, 1, DType::f32, loc);
    const Array u_shifted = 0.5f - abs(u);
    const Array k = floor((2.0f * a / u_shifted + b) * u + lam + 0.43f);
    const Array s = log(v * inv_alpha / (a / (u_shifted * u_shifted) + b));
    const Array t = -lam + k * log_lam - special::gammaln(k + 1.0f);
    const Array accept1 = (u_shifted >= 0.07f) & (v <= v_r);
    const Array reject = (k < 0.0f) | ((u_shifted < 0.013f) & (v > u_shifted));
    const Array accept = accept1 | (~reject & (s <= t));
    return Carry{where(accept, k, std::get<0>(c), loc), std::get<1>(c) | accept, keys[0]};
  };
  const Carry init{full(lam.shape(), -1.0, DType::f32, loc), zeros(lam.shape(), DType::bool_, loc), key};
  return astype(std::get<0>(while_loop(more, step, init, loc)), dtype, loc);
}

}  // namespace

Array poisson(const Array& key, const Array& lam, Shape shape, DType dtype, Loc loc) {
  const char* fn = "random::poisson";
  if (key.dtype() != DType::u32 || key.shape() != Shape{2})
    throw ShapeError(std::string(fn) + ": needs one key, u32[2], got " + detail::describe(key) +
                     " (vmap over a batch of keys)" + detail::where(loc));
  if (dtype != DType::i32 && dtype != DType::i64)
    throw DTypeError(std::string(fn) + ": dtype must be i32 or i64, got " + dtype_name(dtype) + detail::where(loc));
  if (shape.empty()) shape = lam.shape();
  const Array rate = detail::broadcast_to_shape(detail::convert(lam, DType::f32, loc), shape, loc);
  if (rate.size() == 0) return zeros(shape, dtype, loc);
  const Array use_knuth = logical_or(rate != rate, rate < 10.0f, loc);
  const Array small = where(use_knuth, rate, zeros_like(rate), loc);
  const Array large = where(use_knuth, full_like(rate, 1e5), rate, loc);
  const Array result = where(use_knuth, knuth(key, small, dtype, loc), rejection(key, large, dtype, loc), loc);
  return where(rate == 0.0f, zeros_like(result), result, loc);
}

Array poisson(const Array& key, double lam, Shape shape, DType dtype, Loc loc) {
  return poisson(key, scalar(lam, DType::f32, loc), std::move(shape), dtype, loc);
}

}  // namespace graft::random
