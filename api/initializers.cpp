// graft::nn::initializers: jax.nn.initializers' variance scaling, computed
// as JAX computes it so that the same key gives JAX's weights: the variance
// rounded to the dtype, its square root and the truncation constant divided
// in the dtype, then one product with graft::random's draw.
#include "graft/initializers.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "api/lowering.h"
#include "graft/errors.h"
#include "graft/ops.h"
#include "graft/random.h"
#include "ir/dtype.h"
#include "ir/value.h"

namespace graft::nn::initializers {
namespace {

using Loc = std::source_location;

double in_dtype(double v, DType dtype) { return detail::round_to_float_dtype(v, dtype); }

void check_float(const char* fn, DType dtype, const Loc& loc) {
  if (!ir::is_floating(dtype))
    throw DTypeError(std::string(fn) + ": dtype must be a float dtype (f16, bf16, f32, f64), got " + dtype_name(dtype) +
                     detail::where(loc));
}

// JAX's _compute_fans: the in and out axes' sizes times the receptive field (every other axis).
std::pair<double, double> fans(const char* fn, const Shape& shape, int in_axis, int out_axis, const Loc& loc) {
  const int rank = static_cast<int>(shape.size());
  auto axis = [&](int a, const char* which) {
    if (a < -rank || a >= rank)
      throw ShapeError(std::string(fn) + ": " + which + " " + std::to_string(a) + " is out of range for shape " +
                       ir::shape_str(shape) + " (weights need at least 2 dimensions with the default axes)" +
                       detail::where(loc));
    return a < 0 ? a + rank : a;
  };
  const int in = axis(in_axis, "in_axis"), out = axis(out_axis, "out_axis");
  double total = 1;
  for (int64_t d : shape) total *= static_cast<double>(d);
  const double in_size = static_cast<double>(shape[static_cast<size_t>(in)]);
  const double out_size = static_cast<double>(shape[static_cast<size_t>(out)]);
  const double receptive = total / in_size / out_size;
  return {in_size * receptive, out_size * receptive};
}

// x * c for a host constant c already in x's dtype.
Array scaled(const Array& x, double c, const Loc& loc) { return ArrayAt(x, loc) * scalar(c, x.dtype(), loc); }

}  // namespace

Initializer::Initializer(Fn fn) : fn_(std::move(fn)) {}

Array Initializer::operator()(const Array& key, Shape shape, DType dtype, Loc loc) const {
  return fn_(key, shape, dtype, loc);
}

Initializer variance_scaling(double scale, std::string mode, std::string distribution, int in_axis, int out_axis) {
  const char* fn = "nn::initializers::variance_scaling";
  if (mode != "fan_in" && mode != "fan_out" && mode != "fan_avg" && mode != "fan_geo_avg")
    throw Error(std::string(fn) + ": mode must be fan_in, fan_out, fan_avg or fan_geo_avg, got '" + mode + "'");
  if (distribution != "truncated_normal" && distribution != "normal" && distribution != "uniform")
    throw Error(std::string(fn) + ": distribution must be truncated_normal, normal or uniform, got '" + distribution +
                "'");
  return Initializer([=](const Array& key, const Shape& shape, DType dtype, const Loc& loc) {
    check_float(fn, dtype, loc);
    const auto [fan_in, fan_out] = fans(fn, shape, in_axis, out_axis, loc);
    const double denominator = mode == "fan_in"    ? fan_in
                               : mode == "fan_out" ? fan_out
                               : mode == "fan_avg" ? (fan_in + fan_out) / 2
                                                   : std::sqrt(fan_in * fan_out);
    const double variance = in_dtype(scale / denominator, dtype);
    if (distribution == "truncated_normal") {
      // 0.8796... is the standard deviation of a standard normal truncated to (-2, 2).
      const double stddev = in_dtype(in_dtype(std::sqrt(variance), dtype) / in_dtype(.87962566103423978, dtype), dtype);
      return scaled(random::truncated_normal(key, -2, 2, shape, dtype, loc), stddev, loc);
    }
    if (distribution == "normal")
      return scaled(random::normal(key, shape, dtype, loc), in_dtype(std::sqrt(variance), dtype), loc);
    const double bound = in_dtype(std::sqrt(in_dtype(3 * variance, dtype)), dtype);
    return scaled(random::uniform(key, shape, -1, 1, dtype, loc), bound, loc);
  });
}

Initializer lecun_normal(int in_axis, int out_axis) {
  return variance_scaling(1, "fan_in", "truncated_normal", in_axis, out_axis);
}
Initializer lecun_uniform(int in_axis, int out_axis) {
  return variance_scaling(1, "fan_in", "uniform", in_axis, out_axis);
}
Initializer he_normal(int in_axis, int out_axis) {
  return variance_scaling(2, "fan_in", "truncated_normal", in_axis, out_axis);
}
Initializer he_uniform(int in_axis, int out_axis) {
  return variance_scaling(2, "fan_in", "uniform", in_axis, out_axis);
}
Initializer glorot_normal(int in_axis, int out_axis) {
  return variance_scaling(1, "fan_avg", "truncated_normal", in_axis, out_axis);
}
Initializer glorot_uniform(int in_axis, int out_axis) {
  return variance_scaling(1, "fan_avg", "uniform", in_axis, out_axis);
}

namespace {

// An initializer drawing sample(key, shape, dtype) times factor rounded to the dtype, as JAX's
// `draw * jnp.array(factor, dtype)`.
Initializer scaled_sample(const char* fn, double factor,
                          Array (*sample)(const Array&, const Shape&, DType, const Loc&)) {
  return Initializer([=](const Array& key, const Shape& shape, DType dtype, const Loc& loc) {
    check_float(fn, dtype, loc);
    return scaled(sample(key, shape, dtype, loc), in_dtype(factor, dtype), loc);
  });
}

}  // namespace

Initializer truncated_normal(double stddev) {
  return scaled_sample("nn::initializers::truncated_normal", stddev,
                       [](const Array& k, const Shape& s, DType d, const Loc& l) {
                         return random::truncated_normal(k, -2, 2, s, d, l);
                       });
}

Initializer normal(double stddev) {
  return scaled_sample("nn::initializers::normal", stddev, [](const Array& k, const Shape& s, DType d, const Loc& l) {
    return random::normal(k, s, d, l);
  });
}

Initializer uniform(double scale) {
  return scaled_sample("nn::initializers::uniform", scale, [](const Array& k, const Shape& s, DType d, const Loc& l) {
    return random::uniform(k, s, 0, 1, d, l);
  });
}

Initializer orthogonal(double scale, int column_axis) {
  const char* fn = "nn::initializers::orthogonal";
  return Initializer([=](const Array& key, const Shape& shape, DType dtype, const Loc& loc) {
    check_float(fn, dtype, loc);
    const int rank = static_cast<int>(shape.size());
    if (rank < 2)
      throw ShapeError(std::string(fn) + ": needs a shape of rank >= 2, got " + ir::shape_str(shape) +
                       detail::where(loc));
    const int axis = detail::normalize_axis(fn, column_axis, rank, loc);
    int64_t total = 1;
    for (int64_t d : shape) total *= d;
    if (total == 0) return zeros(shape, dtype, loc);
    const int64_t cols = shape[static_cast<size_t>(axis)], rows = total / cols;
    Shape moved;
    for (int i = 0; i < rank; ++i)
      if (i != axis) moved.push_back(shape[static_cast<size_t>(i)]);
    moved.push_back(cols);
    Array q = reshape(random::orthogonal(key, rows, {}, dtype, cols, loc), moved, loc);
    if (axis != rank - 1) {  // the columns' axis back where column_axis says
      std::vector<int> perm;
      for (int i = 0; i < rank - 1; ++i) perm.push_back(i);
      perm.insert(perm.begin() + axis, rank - 1);
      q = transpose(q, perm, loc);
    }
    return scaled(q, in_dtype(scale, dtype), loc);
  });
}

}  // namespace graft::nn::initializers
