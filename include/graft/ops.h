// NumPy-named operations on Arrays. Binary operations broadcast as NumPy and
// promote as JAX (see README); axes may be negative. Every function records
// the caller's source line for error messages and traced nodes.
#pragma once

#include <source_location>
#include <vector>

#include "graft/array.h"

namespace graft {

using Loc = std::source_location;

// ---- elementwise, unary
#define GRAFT_UNARY(name) Array name(const Array& x, Loc loc = Loc::current());
GRAFT_UNARY(neg)
GRAFT_UNARY(abs)
GRAFT_UNARY(sign)
GRAFT_UNARY(floor)
GRAFT_UNARY(ceil)
GRAFT_UNARY(round)
GRAFT_UNARY(exp)
GRAFT_UNARY(log)
GRAFT_UNARY(log1p)
GRAFT_UNARY(expm1)
GRAFT_UNARY(sqrt)
GRAFT_UNARY(rsqrt)
GRAFT_UNARY(sin)
GRAFT_UNARY(cos)
GRAFT_UNARY(tan)
GRAFT_UNARY(asin)
GRAFT_UNARY(acos)
GRAFT_UNARY(atan)
GRAFT_UNARY(sinh)
GRAFT_UNARY(cosh)
GRAFT_UNARY(tanh)
GRAFT_UNARY(logistic)
GRAFT_UNARY(sigmoid)
GRAFT_UNARY(erf)
GRAFT_UNARY(square)
GRAFT_UNARY(reciprocal)
GRAFT_UNARY(isfinite)
GRAFT_UNARY(logical_not)
GRAFT_UNARY(stop_gradient)
#undef GRAFT_UNARY

// ---- elementwise, binary and ternary
Array pow(const Array& x, const Array& y, Loc loc = Loc::current());
Array maximum(const Array& x, const Array& y, Loc loc = Loc::current());
Array minimum(const Array& x, const Array& y, Loc loc = Loc::current());
Array atan2(const Array& y, const Array& x, Loc loc = Loc::current());
Array logical_and(const Array& x, const Array& y, Loc loc = Loc::current());
Array logical_or(const Array& x, const Array& y, Loc loc = Loc::current());
Array where(const Array& cond, const Array& x, const Array& y, Loc loc = Loc::current());
Array clip(const Array& x, double lo, double hi, Loc loc = Loc::current());
Array astype(const Array& x, DType dtype, Loc loc = Loc::current());

// ---- reductions (`axes` empty = all axes)
Array sum(const Array& x, std::vector<int> axes = {}, bool keepdims = false, Loc loc = Loc::current());
Array mean(const Array& x, std::vector<int> axes = {}, bool keepdims = false, Loc loc = Loc::current());
Array max(const Array& x, std::vector<int> axes = {}, bool keepdims = false, Loc loc = Loc::current());
Array min(const Array& x, std::vector<int> axes = {}, bool keepdims = false, Loc loc = Loc::current());
Array prod(const Array& x, std::vector<int> axes = {}, bool keepdims = false, Loc loc = Loc::current());

// ---- shape
Array reshape(const Array& x, Shape shape, Loc loc = Loc::current());  // one -1 allowed
Array transpose(const Array& x, std::vector<int> perm = {}, Loc loc = Loc::current());
Array broadcast_to(const Array& x, Shape shape, Loc loc = Loc::current());
Array expand_dims(const Array& x, int axis, Loc loc = Loc::current());

// ---- linear algebra
Array matmul(const Array& a, const Array& b, Loc loc = Loc::current());
Array dot_general(const Array& a, const Array& b, std::pair<std::vector<int>, std::vector<int>> contracting,
                  std::pair<std::vector<int>, std::vector<int>> batch = {}, Loc loc = Loc::current());

}  // namespace graft
