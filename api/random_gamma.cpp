// random::gamma, loggamma, beta and dirichlet, as jax.random draws them:
// Marsaglia and Tsang's method per element (jax.random's _gamma_one: its
// keys, its accept test, its boost of alpha < 1), vmapped over one key per
// element, with JAX's reparameterised derivative in alpha,
// random_gamma_grad(alpha, sample) (implicit differentiation of the CDF).
#include <tuple>
#include <utility>

#include "api/dispatch.h"
#include "api/lowering.h"
#include "api/random_keys.h"
#include "graft/autodiff.h"
#include "graft/control_flow.h"
#include "graft/errors.h"
#include "graft/ops.h"
#include "graft/random.h"
#include "graft/vmap.h"
#include "ir/dtype.h"

namespace graft::random {

namespace {

using Loc = std::source_location;
using ir::Op;

std::string at(const Loc& loc) { return detail::where(loc); }

// One Gamma(alpha, 1) draw (its log when log_space) from one key; alpha a
// scalar of the draw's dtype. Line for line jax.random's _gamma_one.
Array gamma_one(const Array& key, const Array& alpha_orig, bool log_space, const Loc& loc) {
  const DType dtype = alpha_orig.dtype();
  auto c = [&](double v) { return scalar(v, dtype, loc); };
  const Array zero = c(0), one = c(1), minus_one = c(-1), two = c(2);
  const Array boost_mask = alpha_orig >= one;
  const Array alpha = where(boost_mask, alpha_orig, alpha_orig + one, loc);
  const Array d = alpha - c(1.0 / 3.0);
  const Array cc = c(1.0 / 3.0) / graft::sqrt(d);

  using State = std::tuple<Array, Array, Array, Array>;  // key, X, V, U
  auto accept_not_yet = [&](const State& s) {
    const Array& X = std::get<1>(s);
    const Array& V = std::get<2>(s);
    const Array& U = std::get<3>(s);
    return (U >= one - c(0.0331) * (X * X)) & (graft::log(U) >= X * c(0.5) + d * ((one - V) + graft::log(V)));
  };
  auto propose = [&](const State& s) {
    std::vector<Array> k3 = split(std::get<0>(s), 3, loc);
    using Kxv = std::tuple<Array, Array, Array>;
    auto next = [&](const Kxv& t) {
      std::vector<Array> k2 = split(std::get<0>(t), 2, loc);
      const Array x = normal(k2[1], {}, dtype, loc);
      return Kxv{k2[0], x, one + x * cc};
    };
    const Kxv xv =
        while_loop([&](const Kxv& t) { return std::get<2>(t) <= zero; }, next, Kxv{k3[1], zero, minus_one}, loc);
    const Array& x = std::get<1>(xv);
    const Array& v = std::get<2>(xv);
    return State{k3[0], x * x, (v * v) * v, uniform(k3[2], {}, 0, 1, dtype, loc)};
  };
  std::vector<Array> k2 = split(key, 2, loc);
  const Array V = std::get<2>(while_loop(accept_not_yet, propose, State{k2[0], zero, one, two}, loc));
  if (log_space) {
    const Array log_samples = -exponential(k2[1], {}, dtype, loc);
    const Array log_boost = where(boost_mask | (log_samples == zero), zero, log_samples * (one / alpha_orig), loc);
    return (graft::log(d) + graft::log(V)) + log_boost;
  }
  const Array samples = one - uniform(k2[1], {}, 0, 1, dtype, loc);
  const Array boost = where(boost_mask, one, graft::pow(samples, one / alpha_orig), loc);
  return (d * V) * boost;
}

// Draws for every element of a (already of the draw's shape and dtype):
// key split into one key per element, as jax.random's _gamma_impl.
Array gamma_draws(const Array& key, const Array& a, bool log_space, const Loc& loc) {
  const int64_t n = a.size();
  if (n == 0) return a;
  const Array keys = detail::random_split_keys(key, n, loc);  // split(key, n) as one u32[n, 2]
  auto one = [log_space, loc](const Array& k, const Array& alpha) { return gamma_one(k, alpha, log_space, loc); };
  return reshape(vmap(one)(keys, reshape(a, {n}, loc)), a.shape(), loc);
}

// The draws with JAX's derivative in a: d sample / d a = random_gamma_grad(a,
// sample), and for log-space draws that over the sample (a zero sample read
// as the dtype's smallest normal).
Array gamma_sample(const Array& key, const Array& a, bool log_space, const Loc& loc) {
  auto f = [log_space, loc](const Array& k, const Array& alpha) { return gamma_draws(k, alpha, log_space, loc); };
  auto rule = [log_space, loc](const std::tuple<Array, Array>& p, const std::tuple<Array, Array>& t) {
    const Array& alpha = std::get<1>(p);
    const Array sample = gamma_draws(std::get<0>(p), alpha, log_space, loc);
    Array slope;
    if (log_space) {
      Array x = graft::exp(sample);
      const double tiny = alpha.dtype() == DType::f32 ? 0x1p-126 : 0x1p-1022;
      x = where(x == 0.0, full_like(x, tiny), x, loc);
      slope = detail::bind1(Op::random_gamma_grad, {alpha, x}, {}, loc) / x;
    } else {
      slope = detail::bind1(Op::random_gamma_grad, {alpha, sample}, {}, loc);
    }
    return std::make_pair(sample, std::get<1>(t) * slope);
  };
  return custom_jvp(f, rule)(key, a);
}

void check_one_key(const char* fn, const Array& key, const Loc& loc) {
  if (key.dtype() != DType::u32)
    throw DTypeError(std::string(fn) + ": a key is u32[2], got " + detail::describe(key) + at(loc));
  if (key.shape() != Shape{2})
    throw ShapeError(std::string(fn) + ": needs one key, u32[2], got " + detail::describe(key) +
                     " (vmap over a batch of keys)" + at(loc));
}

void check_float_dtype(const char* fn, DType dtype, const Loc& loc) {
  if (dtype != DType::f32 && dtype != DType::f64)
    throw DTypeError(std::string(fn) + ": dtype must be f32 or f64, got " + dtype_name(dtype) + at(loc));
}

Array gamma_of(const char* fn, const Array& key, const Array& a, Shape shape, DType dtype, bool log_space,
               const Loc& loc) {
  check_one_key(fn, key, loc);
  check_float_dtype(fn, dtype, loc);
  const Shape s = detail::random_draw_shape(fn, {a.shape()}, shape, loc);
  return gamma_sample(key, detail::random_param(a, dtype, s, loc), log_space, loc);
}

}  // namespace

Array gamma(const Array& key, const Array& a, Shape shape, DType dtype, Loc loc) {
  return gamma_of("random::gamma", key, a, std::move(shape), dtype, false, loc);
}
Array gamma(const Array& key, double a, Shape shape, DType dtype, Loc loc) {
  return gamma(key, scalar(a, dtype, loc), std::move(shape), dtype, loc);
}
Array loggamma(const Array& key, const Array& a, Shape shape, DType dtype, Loc loc) {
  return gamma_of("random::loggamma", key, a, std::move(shape), dtype, true, loc);
}
Array loggamma(const Array& key, double a, Shape shape, DType dtype, Loc loc) {
  return loggamma(key, scalar(a, dtype, loc), std::move(shape), dtype, loc);
}

// Gamma(a) / (Gamma(a) + Gamma(b)) from log-space draws, scaled by their
// maximum so that neither underflows (jax.random's _beta).
Array beta(const Array& key, const Array& a, const Array& b, Shape shape, DType dtype, Loc loc) {
  const char* fn = "random::beta";
  check_one_key(fn, key, loc);
  check_float_dtype(fn, dtype, loc);
  const Shape s = detail::random_draw_shape(fn, {a.shape(), b.shape()}, shape, loc);
  std::vector<Array> keys = split(key, 2, loc);
  const Array log_a = gamma_sample(keys[0], detail::random_param(a, dtype, s, loc), true, loc);
  const Array log_b = gamma_sample(keys[1], detail::random_param(b, dtype, s, loc), true, loc);
  const Array log_max = maximum(log_a, log_b, loc);
  const Array ga = graft::exp(log_a - log_max), gb = graft::exp(log_b - log_max);
  return ga / (ga + gb);
}
Array beta(const Array& key, double a, double b, Shape shape, DType dtype, Loc loc) {
  return beta(key, scalar(a, dtype, loc), scalar(b, dtype, loc), std::move(shape), dtype, loc);
}

// softmax of log-space Gamma(alpha) draws along alpha's last axis.
Array dirichlet(const Array& key, const Array& alpha, Shape shape, DType dtype, Loc loc) {
  const char* fn = "random::dirichlet";
  check_one_key(fn, key, loc);
  check_float_dtype(fn, dtype, loc);
  if (alpha.ndim() < 1)
    throw ShapeError(std::string(fn) + ": alpha must have at least one axis, got a scalar" + at(loc));
  const Shape batch(alpha.shape().begin(), alpha.shape().end() - 1);
  Shape s = detail::random_draw_shape(fn, {batch}, shape, loc);
  s.push_back(alpha.shape().back());
  const Array logs = gamma_sample(key, detail::random_param(alpha, dtype, s, loc), true, loc);
  return softmax(logs, {-1}, loc);
}

}  // namespace graft::random
