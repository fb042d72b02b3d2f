// random::choice, as jax.random.choice: with replacement, randint (or, with
// probabilities p, an inverse-CDF lookup: searchsorted into cumsum(p));
// without, a permutation's first draws (or, with p, the top k of Gumbel
// noise plus log p). The same keys and steps as JAX, so the same draws.
#include <optional>

#include "api/lowering.h"
#include "graft/errors.h"
#include "graft/ops.h"
#include "graft/random.h"
#include "ir/dtype.h"

namespace graft::random {

namespace {

using Loc = std::source_location;

// Indices of the draws: i32[shape].
Array choice_indices(const Array& key, int64_t n, const Shape& shape, bool replace, const std::optional<Array>& p,
                     const Loc& loc) {
  const char* fn = "random::choice";
  int64_t draws = 1;
  for (int64_t d : shape) draws *= d;
  if (n <= 0)
    throw ShapeError(std::string(fn) + ": the population must not be empty unless no draws are taken" +
                     detail::where(loc));
  if (!replace && draws > n)
    throw ShapeError(std::string(fn) + ": cannot take " + std::to_string(draws) + " draws from a population of " +
                     std::to_string(n) + " without replacement" + detail::where(loc));
  if (!p) {
    if (replace) return randint(key, shape, 0, n, DType::i32, loc);
    return reshape(slice(permutation(key, n, loc), {0}, {draws}, {}, loc), shape, loc);
  }
  Array probs = *p;
  if (!ir::is_floating(probs.dtype())) probs = astype(probs, default_float_dtype(), loc);
  if (probs.shape() != Shape{n})
    throw ShapeError(std::string(fn) + ": p must be a vector of the population's size " + std::to_string(n) + ", got " +
                     detail::describe(probs) + detail::where(loc));
  const DType dt = probs.dtype();
  if (replace) {
    const Array cdf = cumsum(probs, 0, false, loc);
    const Array total = reshape(slice(cdf, {n - 1}, {n}, {}, loc), {}, loc);
    const Array r = total * (1.0 - uniform(key, shape, 0, 1, dt, loc));
    return searchsorted(cdf, r, "left", loc);
  }
  const Array g = gumbel(key, {n}, dt, loc) + log(probs);
  return reshape(top_k(g, draws, loc).second, shape, loc);
}

}  // namespace

Array choice(const Array& key, int64_t n, Shape shape, bool replace, const std::optional<Array>& p, Loc loc) {
  int64_t draws = 1;
  for (int64_t d : shape) draws *= d;
  if (draws == 0) return zeros(shape, DType::i32, loc);
  return choice_indices(key, n, shape, replace, p, loc);
}

Array choice(const Array& key, const Array& a, Shape shape, bool replace, const std::optional<Array>& p, int axis,
             Loc loc) {
  if (a.ndim() == 0)
    throw ShapeError("random::choice: a must have an axis to draw from (pass n for 0 .. n-1)" + detail::where(loc));
  const int ax = detail::normalize_axis("random::choice", axis, a.ndim(), loc);
  Shape out(a.shape().begin(), a.shape().begin() + ax);
  out.insert(out.end(), shape.begin(), shape.end());
  out.insert(out.end(), a.shape().begin() + ax + 1, a.shape().end());
  int64_t draws = 1;
  for (int64_t d : shape) draws *= d;
  if (draws == 0) return zeros(out, a.dtype(), loc);
  const Array idx = choice_indices(key, a.shape()[static_cast<size_t>(ax)], shape, replace, p, loc);
  return reshape(take(a, reshape(idx, {draws}, loc), ax, loc), out, loc);
}

}  // namespace graft::random
