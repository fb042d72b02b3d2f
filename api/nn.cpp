// graft::nn, composed from graft ops. Piecewise functions use where with the
// comparison chosen so the derivative at a kink is JAX's, and evaluate a
// branch that could overflow only at safe points (where's cotangent of the
// unused branch is zero, and zero times an infinite derivative is NaN).
#include "graft/nn.h"

#include <cmath>
#include <numbers>

#include "api/array_impl.h"
#include "api/dispatch.h"
#include "api/lowering.h"
#include "graft/errors.h"

namespace graft::nn {

namespace {

void reject_bool(const char* name, const Array& x, const Loc& loc) {
  if (detail::checked_impl(x, name).type.dtype == DType::bool_)
    throw DTypeError(std::string("nn.") + name + ": expected a numeric array, got " + detail::describe(x) +
                     detail::where(loc));
}

// Integer inputs compute in graft's default float, as NumPy's ufuncs on ints.
Array float_input(const char* name, const Array& x, const Loc& loc) {
  reject_bool(name, x, loc);
  return ir::is_floating(x.dtype()) ? x : detail::convert(x, default_float_dtype(), loc);
}

}  // namespace

// where(x <= 0, 0, x) rather than max(x, 0): the derivative at 0 is 0 (max
// splits ties), and NaN still propagates (NaN <= 0 is false).
Array relu(const Array& x, Loc loc) {
  detail::Composite group("relu", loc);
  reject_bool("relu", x, loc);
  return where(ArrayAt(x, loc) <= 0, 0, x, loc);
}

Array relu6(const Array& x, Loc loc) {
  detail::Composite group("relu6", loc);
  reject_bool("relu6", x, loc);
  return where(ArrayAt(x, loc) <= 0, 0, where(ArrayAt(x, loc) >= 6, 6, x, loc), loc);
}

Array gelu(const Array& x, bool approximate, Loc loc) {
  detail::Composite group("gelu", loc);
  Array v = float_input("gelu", x, loc);
  ArrayAt at(v, loc);
  Array half_x = at * 0.5;
  if (!approximate) return ArrayAt(half_x, loc) * (erf({at * (1 / std::numbers::sqrt2), loc}) + 1.0);
  const double c = std::sqrt(2 / std::numbers::pi);
  Array cube = ArrayAt(square({v, loc}), loc) * v;
  Array inner = ArrayAt(at + ArrayAt(cube, loc) * 0.044715, loc) * c;
  return ArrayAt(half_x, loc) * (tanh({inner, loc}) + 1.0);
}

Array silu(const Array& x, Loc loc) {
  detail::Composite group("silu", loc);
  Array v = float_input("silu", x, loc);
  return ArrayAt(v, loc) * sigmoid({v, loc});
}

// max(x, 0) + log1p(exp(-|x|)): exp never sees a positive argument. -|x|
// is written min(x, -x): max's and min's even splits at the tie make the
// derivative at 0 exactly sigmoid(0) = 1/2 (abs's +1 at 0 would give 0).
Array softplus(const Array& x, Loc loc) {
  detail::Composite group("softplus", loc);
  Array v = float_input("softplus", x, loc);
  return ArrayAt(maximum(v, 0.0, loc), loc) + log1p({exp({minimum(v, -ArrayAt(v, loc), loc), loc}), loc});
}

Array log_sigmoid(const Array& x, Loc loc) {
  detail::Composite group("log_sigmoid", loc);
  Array v = float_input("log_sigmoid", x, loc);
  return -ArrayAt(softplus(-ArrayAt(v, loc), loc), loc);
}

Array elu(const Array& x, double alpha, Loc loc) {
  detail::Composite group("elu", loc);
  Array v = float_input("elu", x, loc);
  Array positive = ArrayAt(v, loc) > 0;
  Array safe = where(positive, 0.0, v, loc);  // expm1 of a large positive x would overflow
  return where(positive, v, ArrayAt(expm1({safe, loc}), loc) * alpha, loc);
}

Array leaky_relu(const Array& x, double negative_slope, Loc loc) {
  detail::Composite group("leaky_relu", loc);
  Array v = float_input("leaky_relu", x, loc);
  return where(ArrayAt(v, loc) >= 0, v, ArrayAt(v, loc) * negative_slope, loc);
}

Array standardize(const Array& x, std::vector<int> axes, double epsilon, Loc loc) {
  detail::Composite group("standardize", loc);
  Array v = float_input("standardize", x, loc);
  std::vector<int> seen;
  for (int a : axes) {
    int n = detail::normalize_axis("nn.standardize", a, v.ndim(), loc);
    for (int s : seen)
      if (s == n)
        throw ShapeError("nn.standardize: repeated axis " + std::to_string(a) + " for " + detail::describe(v) +
                         detail::where(loc));
    seen.push_back(n);
  }
  // One mean: the variance is the mean square of the centred values (var() would centre again).
  Array centred = ArrayAt(v, loc) - mean(v, axes, true, loc);
  Array variance = mean(square({centred, loc}), axes, true, loc);
  return ArrayAt(centred, loc) * rsqrt({ArrayAt(variance, loc) + epsilon, loc});
}

}  // namespace graft::nn
