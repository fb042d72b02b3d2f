// graft::nn::initializers: weight initializers as jax.nn.initializers (and
// flax's, which are the same functions). Each factory returns an Initializer,
// called as init(key, shape, dtype = f32); for the same key it draws JAX's
// numbers (graft::random draws jax.random's). Fans are computed as JAX's:
// in_axis -2 and out_axis -1 by default, the other axes a receptive field.
#pragma once

#include <functional>
#include <string>

#include "graft/array.h"
#include "graft/detail/source_location.h"

namespace graft::nn::initializers {

// A weight initializer: init(key, shape, dtype) -> Array of that shape and dtype.
class Initializer {
 public:
  using Fn = std::function<Array(const Array& key, const Shape& shape, DType dtype, const std::source_location& loc)>;
  explicit Initializer(Fn fn);
  // Draws the weights (dtype f32 or f64).
  Array operator()(const Array& key, Shape shape, DType dtype = default_float_dtype(),
                   std::source_location loc = std::source_location::current()) const;

 private:
  Fn fn_;
};

// Variance scale / n with n the fan given by mode ("fan_in", "fan_out", "fan_avg", "fan_geo_avg"),
// drawn from distribution "truncated_normal" (within two standard deviations), "normal" or "uniform".
Initializer variance_scaling(double scale, std::string mode, std::string distribution, int in_axis = -2,
                             int out_axis = -1);
// variance_scaling(1, "fan_in", "truncated_normal"): flax's default for Dense and Conv kernels.
Initializer lecun_normal(int in_axis = -2, int out_axis = -1);
// variance_scaling(1, "fan_in", "uniform").
Initializer lecun_uniform(int in_axis = -2, int out_axis = -1);
// variance_scaling(2, "fan_in", "truncated_normal").
Initializer he_normal(int in_axis = -2, int out_axis = -1);
// variance_scaling(2, "fan_in", "uniform").
Initializer he_uniform(int in_axis = -2, int out_axis = -1);
// variance_scaling(1, "fan_avg", "truncated_normal").
Initializer glorot_normal(int in_axis = -2, int out_axis = -1);
// variance_scaling(1, "fan_avg", "uniform").
Initializer glorot_uniform(int in_axis = -2, int out_axis = -1);
// stddev * a standard normal truncated to (-2, 2).
Initializer truncated_normal(double stddev = 1e-2);
// stddev * a standard normal.
Initializer normal(double stddev = 1e-2);
// Uniform in [0, scale).
Initializer uniform(double scale = 1e-2);
// scale * a matrix with orthonormal columns (or rows, whichever are fewer),
// the shape read as [prod of the other axes, shape[column_axis]]
// (random::orthogonal, as jax.nn.initializers.orthogonal); needs rank >= 2.
Initializer orthogonal(double scale = 1.0, int column_axis = -1);

}  // namespace graft::nn::initializers
