// graft::reduce_window_sum/max/min (include/graft/conv.h) and nn::max_pool
// and nn::avg_pool (include/graft/nn.h), flax's pooling over them: argument
// lists checked, string padding resolved as JAX's reduce_window (the
// window's span with its dilation, over the undilated operand), then one
// windowed-reduction node.
#include <string>
#include <tuple>

#include "api/dispatch.h"
#include "api/lowering.h"
#include "api/padding.h"
#include "graft/conv.h"
#include "graft/errors.h"
#include "graft/nn.h"
#include "ir/dtype.h"

namespace graft {

namespace {

using Loc = std::source_location;

Array reduce_window(ir::Op op, const Array& x, Shape window, Shape strides, const Padding& padding, Shape base,
                    Shape dilation, const Loc& loc) {
  const std::string fn(ir::op_name(op));
  const size_t rank = static_cast<size_t>(x.ndim());
  auto check = [&](Shape v, const char* what, bool empty_is_ones) {
    if (v.empty() && empty_is_ones) v.assign(rank, 1);
    if (v.size() != rank)
      throw ShapeError(fn + ": " + what + " needs " + std::to_string(rank) + " entries (one per dimension of " +
                       detail::describe(x) + "), got " + std::to_string(v.size()) + detail::where(loc));
    return v;
  };
  window = check(window, "window_dimensions", false);
  strides = check(strides, "window_strides", true);
  base = check(base, "base_dilation", true);
  dilation = check(dilation, "window_dilation", true);
  ir::Ints lo(rank), hi(rank);
  if (!padding.name.empty()) {
    for (size_t i = 0; i < rank; ++i) {
      const int64_t span = window[i] < 1 ? 0 : (window[i] - 1) * dilation[i] + 1;
      std::tie(lo[i], hi[i]) = detail::string_padding(padding, x.shape()[i], span, strides[i]);
    }
  } else {
    if (padding.pads.size() != rank)
      throw ShapeError(fn + ": padding needs " + std::to_string(rank) + " {low, high} pairs (one per dimension of " +
                       detail::describe(x) + "), got " + std::to_string(padding.pads.size()) + detail::where(loc));
    for (size_t i = 0; i < rank; ++i) lo[i] = padding.pads[i].first, hi[i] = padding.pads[i].second;
  }
  return detail::bind1(op, {x},
                       {{"base_dilation", ir::Ints(base)},
                        {"padding_high", hi},
                        {"padding_low", lo},
                        {"window_dilation", ir::Ints(dilation)},
                        {"window_dimensions", ir::Ints(window)},
                        {"window_strides", ir::Ints(strides)}},
                       loc);
}

// flax's pool: the window over x's spatial axes (batch..., spatial...,
// features), a batch axis of one added when x has none.
Array pool(ir::Op op, const Array& x_in, Shape window_shape, Shape strides, Padding padding, const Loc& loc) {
  const char* fn = op == ir::Op::reduce_window_max ? "nn::max_pool" : "nn::avg_pool";
  const int spatial = static_cast<int>(window_shape.size());
  if (spatial < 1 || x_in.ndim() < spatial + 1)
    throw ShapeError(std::string(fn) + ": x " + detail::describe(x_in) + " needs the " + std::to_string(spatial) +
                     " spatial axes of window_shape and a feature axis" + detail::where(loc));
  if (strides.empty()) strides.assign(window_shape.size(), 1);
  if (strides.size() != window_shape.size())
    throw ShapeError(std::string(fn) + ": strides has " + std::to_string(strides.size()) + " entries, window_shape " +
                     std::to_string(spatial) + detail::where(loc));
  const bool unbatched = x_in.ndim() == spatial + 1;
  const Array x = unbatched ? expand_dims(x_in, 0, loc) : x_in;
  const size_t batch_axes = static_cast<size_t>(x.ndim() - spatial - 1);
  Shape window(batch_axes, 1), step(batch_axes, 1);
  window.insert(window.end(), window_shape.begin(), window_shape.end());
  step.insert(step.end(), strides.begin(), strides.end());
  window.push_back(1);
  step.push_back(1);
  if (padding.name.empty()) {
    if (padding.pads.size() != window_shape.size())
      throw ShapeError(std::string(fn) + ": padding needs " + std::to_string(spatial) +
                       " {low, high} pairs (one per spatial axis), got " + std::to_string(padding.pads.size()) +
                       detail::where(loc));
    padding.pads.insert(padding.pads.begin(), batch_axes, {0, 0});
    padding.pads.emplace_back(0, 0);
  }
  const Array y = reduce_window(op, x, window, step, padding, {}, {}, loc);
  return unbatched ? squeeze(y, {0}, loc) : y;
}

}  // namespace

Array reduce_window_sum(const Array& x, Shape window_dimensions, Shape window_strides, Padding padding,
                        Shape base_dilation, Shape window_dilation, Loc loc) {
  return reduce_window(ir::Op::reduce_window_sum, x, std::move(window_dimensions), std::move(window_strides), padding,
                       std::move(base_dilation), std::move(window_dilation), loc);
}

Array reduce_window_max(const Array& x, Shape window_dimensions, Shape window_strides, Padding padding,
                        Shape base_dilation, Shape window_dilation, Loc loc) {
  return reduce_window(ir::Op::reduce_window_max, x, std::move(window_dimensions), std::move(window_strides), padding,
                       std::move(base_dilation), std::move(window_dilation), loc);
}

Array reduce_window_min(const Array& x, Shape window_dimensions, Shape window_strides, Padding padding,
                        Shape base_dilation, Shape window_dilation, Loc loc) {
  return reduce_window(ir::Op::reduce_window_min, x, std::move(window_dimensions), std::move(window_strides), padding,
                       std::move(base_dilation), std::move(window_dilation), loc);
}

namespace nn {

Array max_pool(const Array& x, Shape window_shape, Shape strides, Padding padding, Loc loc) {
  return pool(ir::Op::reduce_window_max, x, std::move(window_shape), std::move(strides), std::move(padding), loc);
}

Array avg_pool(const Array& x_in, Shape window_shape, Shape strides, Padding padding, Loc loc) {
  const Array x = ir::is_inexact(x_in.dtype()) ? x_in : astype(x_in, DType::f32, loc);
  int64_t size = 1;
  for (int64_t w : window_shape) size *= w;
  const Array sum =
      pool(ir::Op::reduce_window_sum, x, std::move(window_shape), std::move(strides), std::move(padding), loc);
  return sum / static_cast<double>(size);
}

}  // namespace nn

}  // namespace graft
