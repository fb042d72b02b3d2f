// NumPy-named operations on Arrays. Binary operations broadcast as NumPy and
// promote as JAX (see README); axes may be negative. Every function records
// the caller's source line for error messages and traced nodes.
#pragma once

#include <source_location>
#include <string>
#include <utility>
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
Array argmax(const Array& x, int axis, Loc loc = Loc::current());  // i32 indices; NaN counts as the maximum
Array argmin(const Array& x, int axis, Loc loc = Loc::current());
Array logsumexp(const Array& x, std::vector<int> axes = {}, bool keepdims = false, Loc loc = Loc::current());
Array softmax(const Array& x, std::vector<int> axes = {-1}, Loc loc = Loc::current());
Array log_softmax(const Array& x, std::vector<int> axes = {-1}, Loc loc = Loc::current());
Array cumsum(const Array& x, int axis, Loc loc = Loc::current());
// Running product / maximum / minimum along axis (from the end when reverse), as lax.cumprod etc.
Array cumprod(const Array& x, int axis, bool reverse = false, Loc loc = Loc::current());
Array cummax(const Array& x, int axis, bool reverse = false, Loc loc = Loc::current());
Array cummin(const Array& x, int axis, bool reverse = false, Loc loc = Loc::current());
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
Array squeeze(const Array& x, std::vector<int> axes = {}, Loc loc = Loc::current());  // {} = every size-1 axis
Array concatenate(const std::vector<Array>& xs, int axis = 0, Loc loc = Loc::current());
Array stack(const std::vector<Array>& xs, int axis = 0, Loc loc = Loc::current());
Array flip(const Array& x, std::vector<int> axes, Loc loc = Loc::current());
// x[start:stop:step] per axis; empty step means 1; negative bounds count from the end, then clamp, as NumPy.
Array slice(const Array& x, Shape start, Shape stop, Shape step = {}, Loc loc = Loc::current());
Array pad(const Array& x, std::vector<std::pair<int64_t, int64_t>> widths, double value = 0, Loc loc = Loc::current());

// ---- indexing with run-time indices
// A window of `sizes` at traced (or concrete) start indices, clamped into range.
Array dynamic_slice(const Array& x, std::vector<Array> start, Shape sizes, Loc loc = Loc::current());
Array dynamic_update_slice(const Array& x, const Array& update, std::vector<Array> start, Loc loc = Loc::current());
// Entries of x along `axis` at integer `indices` (negative counts from the end; out of range clamps).
Array take(const Array& x, const Array& indices, int axis = 0, Loc loc = Loc::current());
// x with `updates` added at `indices` along `axis` (repeated indices accumulate; out of range is dropped).
Array scatter_add(const Array& x, const Array& indices, const Array& updates, int axis = 0, Loc loc = Loc::current());
Array sort(const Array& x, int axis = -1, Loc loc = Loc::current());
Array argsort(const Array& x, int axis = -1, Loc loc = Loc::current());  // stable, i32
Array one_hot(const Array& labels, int64_t n, DType dtype = DType::f32, Loc loc = Loc::current());

// ---- linear algebra
Array matmul(const Array& a, const Array& b, Loc loc = Loc::current());
Array dot(const Array& a, const Array& b, Loc loc = Loc::current());  // NumPy's dot
// Explicit-output einsum over letters, e.g. "bij,bjk->bik"; implicit output (no "->")
// sorts the letters that appear once, as NumPy. A letter repeated within one operand is unsupported.
Array einsum(const std::string& spec, const std::vector<Array>& operands, Loc loc = Loc::current());
Array dot_general(const Array& a, const Array& b, std::pair<std::vector<int>, std::vector<int>> contracting,
                  std::pair<std::vector<int>, std::vector<int>> batch = {}, Loc loc = Loc::current());

}  // namespace graft
