// graft::nn: activation functions and standardisation, as jax.nn. Each is a
// composition of graft ops, so derivatives, vmap and jit come from the
// primitives' rules; each records the caller's line like the ops in ops.h.
// Integer inputs compute in f32 (relu and relu6 keep integer dtypes); bool
// inputs are a DTypeError.
#pragma once

#include <vector>

#include "graft/array.h"
#include "graft/conv.h"
#include "graft/ops.h"

namespace graft::nn {

// max(x, 0); the derivative at 0 is 0, as JAX's.
Array relu(const Array& x, Loc loc = Loc::current());
// min(max(x, 0), 6); derivative 0 at both kinks.
Array relu6(const Array& x, Loc loc = Loc::current());
// x * Phi(x): by default the tanh approximation
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))); approximate = false is the
// exact 0.5 x (1 + erf(x / sqrt(2))).
Array gelu(const Array& x, bool approximate = true, Loc loc = Loc::current());
// x * sigmoid(x) (also called swish).
Array silu(const Array& x, Loc loc = Loc::current());
// log(1 + exp(x)), computed as max(x, 0) + log1p(exp(-|x|)) so it does not overflow.
Array softplus(const Array& x, Loc loc = Loc::current());
// log(sigmoid(x)) = -softplus(-x), finite for large |x|.
Array log_sigmoid(const Array& x, Loc loc = Loc::current());
// x for x > 0, alpha * (exp(x) - 1) otherwise.
Array elu(const Array& x, double alpha = 1, Loc loc = Loc::current());
// x for x >= 0, negative_slope * x otherwise.
Array leaky_relu(const Array& x, double negative_slope = 0.01, Loc loc = Loc::current());
// (x - mean) / sqrt(var + epsilon), mean and (biased) variance taken over axes.
Array standardize(const Array& x, std::vector<int> axes = {-1}, double epsilon = 1e-5, Loc loc = Loc::current());

// flax.linen.max_pool: the maximum of each window over x's spatial axes,
// x being (batch..., spatial..., features) with one spatial axis per entry
// of window_shape (no batch axis is allowed); strides empty: all 1.
Array max_pool(const Array& x, Shape window_shape, Shape strides = {}, Padding padding = "VALID",
               Loc loc = Loc::current());
// flax.linen.avg_pool: each window's mean, padding counted (as flax's
// count_include_pad=True); integer inputs average in f32.
Array avg_pool(const Array& x, Shape window_shape, Shape strides = {}, Padding padding = "VALID",
               Loc loc = Loc::current());

}  // namespace graft::nn
