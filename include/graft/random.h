// Counter-based, splittable random numbers, as jax.random with the threefry
// generator: a key is a u32[2] array; the same key always gives the same
// numbers (on any thread count, eagerly or traced), and new keys come from
// split / fold_in, never from hidden state.
//
// Keys may also be batched, u32[..., 2]: each function then returns
// key.shape[:-1] + shape, one independent draw per key.
//
// Every function records the caller's source line for errors and traced
// nodes. A key that is not u32[..., 2] throws DTypeError / ShapeError naming
// the function.
#pragma once

#include <cstdint>
#include <source_location>
#include <vector>

#include "graft/array.h"

namespace graft::random {

// The key of a seed: u32[2] = (high 32 bits of seed, low 32 bits), as JAX's PRNGKey.
Array key(uint64_t seed, std::source_location loc = std::source_location::current());

// n new independent keys (n >= 1); child i is threefry2x32(key, (0, i)).
std::vector<Array> split(const Array& key, int n = 2, std::source_location loc = std::source_location::current());

// A new key derived from key and data; different data give independent keys.
Array fold_in(const Array& key, uint32_t data, std::source_location loc = std::source_location::current());

// Raw random words, u32[shape] (the random_bits primitive).
Array bits(const Array& key, Shape shape, std::source_location loc = std::source_location::current());

// Uniform floats in [lo, hi) (lo < hi; dtype f32 or f64).
Array uniform(const Array& key, Shape shape, double lo = 0, double hi = 1, DType dtype = default_float_dtype(),
              std::source_location loc = std::source_location::current());

// Standard normal floats (dtype f32 or f64).
Array normal(const Array& key, Shape shape, DType dtype = default_float_dtype(),
             std::source_location loc = std::source_location::current());

// bool array, true with probability p (0 <= p <= 1).
Array bernoulli(const Array& key, double p, Shape shape, std::source_location loc = std::source_location::current());

// i32 integers uniform in [lo, hi) (lo < hi, both within the i32 range; hi may be 2^31).
Array randint(const Array& key, Shape shape, int64_t lo, int64_t hi,
              std::source_location loc = std::source_location::current());

}  // namespace graft::random
