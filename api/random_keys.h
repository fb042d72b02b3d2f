// What the samplers of api/ share: keys, and the shape and parameters of a
// draw with Array parameters (random.cpp defines them).
#pragma once

#include <cstdint>
#include <source_location>
#include <vector>

#include "graft/array.h"

namespace graft::detail {

// random::split(key, n) as one u32[n, 2] array (key one u32[2] key).
Array random_split_keys(const Array& key, int64_t n, const std::source_location& loc);

// The shape of a draw: shape, or the parameters' broadcast shape where shape
// is {}; otherwise the parameters must broadcast to shape (jax.random's
// _check_shape), else a ShapeError naming fn.
Shape random_draw_shape(const char* fn, const std::vector<Shape>& params, const Shape& shape,
                        const std::source_location& loc);

// Parameter p converted to dtype and broadcast to the draw's shape.
Array random_param(const Array& p, DType dtype, const Shape& shape, const std::source_location& loc);

}  // namespace graft::detail
