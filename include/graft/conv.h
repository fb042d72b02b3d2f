// Convolution and windowed reductions as jax.lax's: conv_general_dilated over the conv_general_dilated
// primitive (any layout, 1 to 3 spatial dimensions, strides, padding, lhs and
// rhs dilation, feature and batch groups), conv and conv_transpose. Derivatives are JAX's
// (the transposes are convolutions too) and vmap folds the mapped axis into
// the batch or the features, as JAX. The CPU kernel runs GEMMs over
// gathered patches (depthwise ones and transposed ones without their
// zeros); CUDA devices a generated direct kernel. reduce_window_sum/max/min reduce
// every window of an array (pooling); max and min pass derivatives to the
// window's first extreme element, as XLA's select-and-scatter.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "graft/array.h"
#include "graft/detail/source_location.h"
#include "graft/ops.h"

namespace graft {

// The layouts of lhs, rhs (the kernel) and the output, one letter per
// dimension as jax.lax.conv_dimension_numbers: N (batch) and C (features)
// for lhs and out, O and I (output and input features) for rhs, and the
// same spatial letters in each (any others, e.g. "HW"); their order in rhs
// orders the spatial dimensions. The default, NCHW/OIHW/NCHW, stands for
// the canonical order at every rank (batch, feature, spatial...), as JAX's
// dimension_numbers=None.
struct ConvDimensionNumbers {
  std::string lhs = "NCHW", rhs = "OIHW", out = "NCHW";
};

// A convolution's padding: "SAME" (output size ceil(input / stride), the
// extra element at the end), "SAME_LOWER" (at the start), "VALID" (none), or
// explicit {low, high} pairs per spatial dimension (negative ones crop).
struct Padding {
  Padding(const char* name);                                        // "SAME", "SAME_LOWER" or "VALID"
  Padding(std::string name);                                        // the same
  Padding(std::vector<std::pair<int64_t, int64_t>> explicit_pads);  // {low, high} per spatial dimension
  std::string name;                                                 // empty for explicit pads
  std::vector<std::pair<int64_t, int64_t>> pads;
};

// lax.conv_general_dilated: window_strides (empty: all 1), padding, lhs and
// rhs dilation (empty: all 1), layouts, feature_group_count (grouped and
// depthwise convolutions) and batch_group_count (at most one above 1);
// options.preferred_element_type computes and returns in that dtype.
// Operands are promoted to one float or complex dtype. A string padding
// with an lhs dilation is an error, as in JAX.
Array conv_general_dilated(const Array& lhs, const Array& rhs, Shape window_strides, Padding padding,
                           Shape lhs_dilation = {}, Shape rhs_dilation = {},
                           ConvDimensionNumbers dimension_numbers = {}, int64_t feature_group_count = 1,
                           int64_t batch_group_count = 1, DotOptions options = {},
                           std::source_location loc = std::source_location::current());

// lax.conv: lhs NC<spatial> against rhs OI<spatial> with strides and padding.
Array conv(const Array& lhs, const Array& rhs, Shape window_strides, Padding padding,
           std::source_location loc = std::source_location::current());

// lax.conv_transpose: the gradient-of-convolution style transposed
// convolution (lhs dilated by the strides): "SAME" and "VALID" padding as
// JAX's _conv_transpose_padding, explicit pairs passed to the convolution
// as they are; the default layouts are TensorFlow's (NHC/HIO/NHC,
// NHWC/HWIO/NHWC, NHWDC/HWDIO/NHWDC); transpose_kernel flips the kernel's
// spatial axes and swaps its I and O, as JAX's.
Array conv_transpose(const Array& lhs, const Array& rhs, Shape strides, Padding padding, Shape rhs_dilation = {},
                     std::optional<ConvDimensionNumbers> dimension_numbers = {}, bool transpose_kernel = false,
                     std::source_location loc = std::source_location::current());

// lax.reduce_window_sum: each output element the sum of one window of x.
// window_dimensions, window_strides (empty: all 1), base_dilation and
// window_dilation (empty: all 1) have one entry per dimension of x; string
// padding is resolved per dimension as a convolution's (the window's span
// with its dilation). Padding adds zeros.
Array reduce_window_sum(const Array& x, Shape window_dimensions, Shape window_strides, Padding padding,
                        Shape base_dilation = {}, Shape window_dilation = {},
                        std::source_location loc = std::source_location::current());

// lax.reduce_window_max: each window's maximum (padding and dilation holes
// hold -inf, or the dtype's lowest); the derivative reaches the window's
// first maximum.
Array reduce_window_max(const Array& x, Shape window_dimensions, Shape window_strides, Padding padding,
                        Shape base_dilation = {}, Shape window_dilation = {},
                        std::source_location loc = std::source_location::current());

// lax.reduce_window_min: each window's minimum, as reduce_window_max.
Array reduce_window_min(const Array& x, Shape window_dimensions, Shape window_strides, Padding padding,
                        Shape base_dilation = {}, Shape window_dilation = {},
                        std::source_location loc = std::source_location::current());

}  // namespace graft
