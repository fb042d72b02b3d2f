// NumPy-named operations on Arrays. Binary operations broadcast as NumPy and
// promote as JAX (see docs/API.md); axes may be negative. Every function records
// the caller's source line for error messages and traced nodes.
#pragma once

#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "graft/array.h"
#include "graft/detail/source_location.h"

namespace graft {

using Loc = std::source_location;

// ---- elementwise, unary
// Each takes one ArrayAt (an Array and, implicitly, the caller's line), so
// the name is a single function that transforms take directly:
// vmap(graft::sin)(x), jit(graft::exp). Pass an explicit line as sin({x, loc}).
// The float functions (floor ... reciprocal) of an integer or bool Array
// compute in the default float dtype, as NumPy's sin(int) does; accuracy per
// function and instruction set: docs/FLOAT_MATH.md.
Array neg(ArrayAt x);            // -x; integers wrap: neg(INT_MIN) == INT_MIN
Array abs(ArrayAt x);            // |x|; integers wrap: abs(INT_MIN) == INT_MIN, as XLA
Array sign(ArrayAt x);           // -1, 0 or 1 in x's dtype; NaN stays NaN, sign(-0.0) == 0
// ---- complex numbers (c64 from f32 parts, c128 from f64; other reals convert to the default float first)
Array complex(const Array& re, const Array& im, Loc loc = Loc::current());  // re + i im, as lax.complex
Array real(const Array& x, Loc loc = Loc::current());   // the real part (a real x itself), as jnp.real
Array imag(const Array& x, Loc loc = Loc::current());   // the imaginary part (zeros for a real x), as jnp.imag
Array conj(const Array& x, Loc loc = Loc::current());   // the complex conjugate (a real x itself), as jnp.conj
Array angle(const Array& x, Loc loc = Loc::current());  // atan2(imag, real), a real array, as jnp.angle
Array floor(ArrayAt x);          // round toward -inf
Array ceil(ArrayAt x);           // round toward +inf
Array round(ArrayAt x);          // round half to even, as np.round
Array exp(ArrayAt x);            // e^x
Array log(ArrayAt x);            // natural log; NaN below 0, -inf at 0
Array log1p(ArrayAt x);          // log(1 + x), accurate near 0
Array expm1(ArrayAt x);          // e^x - 1, accurate near 0
Array sqrt(ArrayAt x);           // correctly rounded; NaN below 0
Array rsqrt(ArrayAt x);          // 1 / sqrt(x)
Array cbrt(ArrayAt x);           // the real cube root, negative for negative x (unlike pow(x, 1/3))
Array sin(ArrayAt x);            // sine of radians
Array cos(ArrayAt x);            // cosine of radians
Array tan(ArrayAt x);            // tangent of radians
Array asin(ArrayAt x);           // in [-pi/2, pi/2]; NaN outside [-1, 1]
Array acos(ArrayAt x);           // in [0, pi]; NaN outside [-1, 1]
Array atan(ArrayAt x);           // in (-pi/2, pi/2)
Array sinh(ArrayAt x);           // hyperbolic sine
Array cosh(ArrayAt x);           // hyperbolic cosine
Array tanh(ArrayAt x);           // hyperbolic tangent
Array logistic(ArrayAt x);       // 1 / (1 + e^-x)
Array sigmoid(ArrayAt x);        // logistic(x), NumPy/JAX's other name
Array erf(ArrayAt x);            // the error function
Array erf_inv(ArrayAt x);        // the inverse error function on [-1, 1] (+-inf at +-1, NaN beyond), as lax.erf_inv
Array exp2(ArrayAt x);           // 2^x
Array log2(ArrayAt x);           // base-2 log
Array log10(ArrayAt x);          // base-10 log
Array asinh(ArrayAt x);          // inverse hyperbolic sine
Array acosh(ArrayAt x);          // inverse hyperbolic cosine; NaN below 1
Array atanh(ArrayAt x);          // inverse hyperbolic tangent; +-inf at +-1, NaN beyond
Array trunc(ArrayAt x);          // round toward 0
Array isnan(ArrayAt x);          // bool: x is NaN (false for integers)
Array isinf(ArrayAt x);          // bool: x is +inf or -inf
Array isposinf(ArrayAt x);       // bool: x is +inf
Array isneginf(ArrayAt x);       // bool: x is -inf
Array square(ArrayAt x);         // x * x in x's dtype (integers wrap)
Array reciprocal(ArrayAt x);     // 1 / x
Array isfinite(ArrayAt x);       // bool: neither inf nor NaN (true for integers)
Array logical_not(ArrayAt x);    // bool: x == 0
Array stop_gradient(ArrayAt x);  // x, with a zero derivative under every transform

// ---- elementwise, binary and ternary
Array pow(const Array& x, const Array& y, Loc loc = Loc::current());
Array maximum(const Array& x, const Array& y, Loc loc = Loc::current());
Array minimum(const Array& x, const Array& y, Loc loc = Loc::current());
Array atan2(const Array& y, const Array& x, Loc loc = Loc::current());
Array logical_and(const Array& x, const Array& y, Loc loc = Loc::current());
Array logical_or(const Array& x, const Array& y, Loc loc = Loc::current());
Array where(const Array& cond, const Array& x, const Array& y, Loc loc = Loc::current());
Array clip(const Array& x, double lo, double hi, Loc loc = Loc::current());
// NumPy's remainder (operator %): the result has the sign of y (floats too);
// floor_divide rounds the quotient toward -inf. Integers divide exactly.
Array remainder(const Array& x, const Array& y, Loc loc = Loc::current());
Array floor_divide(const Array& x, const Array& y, Loc loc = Loc::current());
Array astype(const Array& x, DType dtype, Loc loc = Loc::current());
// x's bits read as dtype (NumPy's and JAX's x.view(dtype)): of one width, the same shape; across
// widths the last axis holds the same bytes as more or fewer elements (f32[3] as u8 is u8[12],
// low bytes first; u8[..., 4k] as f32 is f32[..., k]). bool and complex keep their widths.
Array bitcast(const Array& x, DType dtype, Loc loc = Loc::current());
// The next float after x toward y (x itself when equal), as np.nextafter.
Array nextafter(const Array& x, const Array& y, Loc loc = Loc::current());
// log(e^x + e^y) without overflow; its derivative as JAX's (finite at infinities).
Array logaddexp(const Array& x, const Array& y, Loc loc = Loc::current());
// NaN replaced by `nan`, +inf by `posinf` and -inf by `neginf` (by default the
// dtype's largest and lowest finite values); integers pass through.
Array nan_to_num(const Array& x, double nan = 0.0, std::optional<double> posinf = {}, std::optional<double> neginf = {},
                 Loc loc = Loc::current());
// min(max(x, lo), hi), as lax.clamp: NaN propagates; the derivative in x is 1
// strictly inside (lo, hi), in lo where lo > x, in hi where hi < x.
Array clamp(const Array& lo, const Array& x, const Array& hi, Loc loc = Loc::current());
Array clamp(double lo, const Array& x, double hi, Loc loc = Loc::current());  // bounds in x's dtype
// x rounded to a float format of exponent_bits and mantissa_bits (lax.reduce_precision, XLA's
// rounding): to nearest, ties to an even last bit; beyond the exponent range inf, below it a signed
// zero (no subnormals); NaN stays NaN. (5, 10) is f16's format, (8, 7) bf16's. Derivative: the
// tangent passes through (JAX also rounds the tangent; the same where it is representable).
Array reduce_precision(const Array& x, int exponent_bits, int mantissa_bits, Loc loc = Loc::current());
// Bitwise and, or and xor of integer or bool arrays (operators & | ^; ~ is bitwise_not).
Array bitwise_and(const Array& x, const Array& y, Loc loc = Loc::current());
Array bitwise_or(const Array& x, const Array& y, Loc loc = Loc::current());
Array bitwise_xor(const Array& x, const Array& y, Loc loc = Loc::current());
Array bitwise_not(ArrayAt x);  // ~x of an integer or bool array
// x << y and x >> y of integer arrays (operators << >>): >> is arithmetic for signed and logical for
// unsigned dtypes, as NumPy's; an amount >= the width (or negative) gives 0, or the sign for >>, as JAX.
Array left_shift(const Array& x, const Array& y, Loc loc = Loc::current());
Array right_shift(const Array& x, const Array& y, Loc loc = Loc::current());
Array population_count(ArrayAt x);  // the number of set bits of each integer
Array clz(ArrayAt x);               // the number of leading zero bits (the width for 0)

// ---- the same with a plain number for one operand. The number is weakly
// typed, as with the arithmetic operators: it takes the array's dtype unless
// its kind is higher (an int array and a floating number give f32), so
// pow(x_f64, 0.37) uses the exact double 0.37 and pow(x_f32, 0.37) its f32
// rounding. (Defined in graft/detail/ops_scalar.h.)
template <Scalar S>
Array pow(const Array& x, S y, Loc loc = Loc::current());  // x ** y
template <Scalar S>
Array pow(S x, const Array& y, Loc loc = Loc::current());  // x ** y
template <Scalar S>
Array maximum(const Array& x, S y, Loc loc = Loc::current());  // NaN propagates
template <Scalar S>
Array maximum(S x, const Array& y, Loc loc = Loc::current());
template <Scalar S>
Array minimum(const Array& x, S y, Loc loc = Loc::current());  // NaN propagates
template <Scalar S>
Array minimum(S x, const Array& y, Loc loc = Loc::current());
template <Scalar S>
Array atan2(const Array& y, S x, Loc loc = Loc::current());  // the angle of (x, y)
template <Scalar S>
Array atan2(S y, const Array& x, Loc loc = Loc::current());
template <Scalar S>
Array remainder(const Array& x, S y, Loc loc = Loc::current());  // the sign of y, as NumPy
template <Scalar S>
Array remainder(S x, const Array& y, Loc loc = Loc::current());
template <Scalar S>
Array floor_divide(const Array& x, S y, Loc loc = Loc::current());  // rounds toward -inf
template <Scalar S>
Array floor_divide(S x, const Array& y, Loc loc = Loc::current());
template <Scalar S>
Array bitwise_and(const Array& x, S y, Loc loc = Loc::current());  // x & y (integer or bool x)
template <Scalar S>
Array bitwise_and(S x, const Array& y, Loc loc = Loc::current());
template <Scalar S>
Array bitwise_or(const Array& x, S y, Loc loc = Loc::current());  // x | y
template <Scalar S>
Array bitwise_or(S x, const Array& y, Loc loc = Loc::current());
template <Scalar S>
Array bitwise_xor(const Array& x, S y, Loc loc = Loc::current());  // x ^ y
template <Scalar S>
Array bitwise_xor(S x, const Array& y, Loc loc = Loc::current());
template <Scalar S>
Array left_shift(const Array& x, S y, Loc loc = Loc::current());  // x << y
template <Scalar S>
Array left_shift(S x, const Array& y, Loc loc = Loc::current());
template <Scalar S>
Array right_shift(const Array& x, S y, Loc loc = Loc::current());  // x >> y (arithmetic for signed)
template <Scalar S>
Array right_shift(S x, const Array& y, Loc loc = Loc::current());
template <Scalar S>
Array where(const Array& cond, const Array& x, S y, Loc loc = Loc::current());  // cond ? x : y
template <Scalar S>
Array where(const Array& cond, S x, const Array& y, Loc loc = Loc::current());  // cond ? x : y

// ---- reductions (`axes` empty = all axes)
Array argmax(const Array& x, int axis, Loc loc = Loc::current());  // i32 indices; NaN counts as the maximum
Array argmin(const Array& x, int axis, Loc loc = Loc::current());
Array logsumexp(const Array& x, std::vector<int> axes = {}, bool keepdims = false, Loc loc = Loc::current());
Array softmax(const Array& x, std::vector<int> axes = {-1}, Loc loc = Loc::current());
Array log_softmax(const Array& x, std::vector<int> axes = {-1}, Loc loc = Loc::current());
// Running sum / product / maximum / minimum along axis (from the end when reverse), as lax.cumsum etc.
Array cumsum(const Array& x, int axis, bool reverse = false, Loc loc = Loc::current());
Array cumprod(const Array& x, int axis, bool reverse = false, Loc loc = Loc::current());
Array cummax(const Array& x, int axis, bool reverse = false, Loc loc = Loc::current());
Array cummin(const Array& x, int axis, bool reverse = false, Loc loc = Loc::current());
// log(cumsum(exp(x))) along axis without overflow or underflow (lax.cumlogsumexp); floats only.
Array cumlogsumexp(const Array& x, int axis, bool reverse = false, Loc loc = Loc::current());
Array sum(const Array& x, std::vector<int> axes = {}, bool keepdims = false, Loc loc = Loc::current());
Array mean(const Array& x, std::vector<int> axes = {}, bool keepdims = false, Loc loc = Loc::current());
Array max(const Array& x, std::vector<int> axes = {}, bool keepdims = false, Loc loc = Loc::current());
Array min(const Array& x, std::vector<int> axes = {}, bool keepdims = false, Loc loc = Loc::current());
Array prod(const Array& x, std::vector<int> axes = {}, bool keepdims = false, Loc loc = Loc::current());
// Whether any / every element is nonzero, as bool (a NaN counts as nonzero, as NumPy).
Array any(const Array& x, std::vector<int> axes = {}, bool keepdims = false, Loc loc = Loc::current());
Array all(const Array& x, std::vector<int> axes = {}, bool keepdims = false, Loc loc = Loc::current());
// Variance: the mean of squared deviations from the mean, divided by (N - ddof)
// instead of N; std is its square root. Integers compute in f32.
Array var(const Array& x, std::vector<int> axes = {}, bool keepdims = false, int ddof = 0, Loc loc = Loc::current());
Array std(const Array& x, std::vector<int> axes = {}, bool keepdims = false, int ddof = 0, Loc loc = Loc::current());

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
// split's count of equal sections. A class, so an integer reaches it only by a
// user-defined conversion: a caller's own split(const Array&, int64_t), found
// beside graft's through `using namespace graft`, stays the better match.
struct SplitSections {
  SplitSections(int64_t n) : n(n) {}  // NOLINT: implicit, so split(x, 3) reads as NumPy's
  int64_t n;
};
// `sections` equal pieces along axis (ShapeError when they do not divide it), as np.split.
std::vector<Array> split(const Array& x, SplitSections sections, int axis = 0, Loc loc = Loc::current());
// Pieces cut before each of `indices` along axis (clamped into range, as NumPy's
// slicing). split(x, {3}) is ambiguous between the two: write split(x, 3) for
// sections or split(x, std::vector<int64_t>{3}) for a cut.
std::vector<Array> split(const Array& x, std::vector<int64_t> indices, int axis = 0, Loc loc = Loc::current());
// x repeated reps[i] times along axis i; reps and x's shape are padded with
// leading ones to the same length, as np.tile.
Array tile(const Array& x, Shape reps, Loc loc = Loc::current());
// Every element repeated `repeats` times along axis, as np.repeat; without an
// axis x is flattened first.
Array repeat(const Array& x, int64_t repeats, int axis, Loc loc = Loc::current());
Array repeat(const Array& x, int64_t repeats, Loc loc = Loc::current());
// The outer product of a and b flattened: r[i, j] = a[i] * b[j].
Array outer(const Array& a, const Array& b, Loc loc = Loc::current());

// ---- ranges: arange(start, stop[, step][, dtype]), NumPy's rules:
// ceil((stop - start) / step) elements start + i * step (none when that is <= 0);
// step 0 is an error. The dtype, unless given, is i32 when every argument is a C++
// integer and f32 (graft's default float) when any is floating, whatever its value.
template <Scalar A, Scalar B, Scalar C = int>
Array arange(A start, B stop, C step = 1, Loc loc = Loc::current());
template <Scalar A, Scalar B, Scalar C>
Array arange(A start, B stop, C step, DType dtype, Loc loc = Loc::current());
template <Scalar A, Scalar B>
Array arange(A start, B stop, DType dtype, Loc loc = Loc::current());

// ---- indexing with run-time indices
// A window of `sizes` at traced (or concrete) start indices, clamped into range.
Array dynamic_slice(const Array& x, std::vector<Array> start, Shape sizes, Loc loc = Loc::current());
Array dynamic_update_slice(const Array& x, const Array& update, std::vector<Array> start, Loc loc = Loc::current());
// Entries of x along `axis` at integer `indices` (negative counts from the end; out of range clamps).
Array take(const Array& x, const Array& indices, int axis = 0, Loc loc = Loc::current());
// x with `updates` added at `indices` along `axis` (repeated indices accumulate; out of range is dropped).
Array scatter_add(const Array& x, const Array& indices, const Array& updates, int axis = 0, Loc loc = Loc::current());
Array sort(const Array& x, int axis = -1, Loc loc = Loc::current());
// Stable, i32; descending keeps equal elements in their order and puts NaN first, as jnp.argsort.
Array argsort(const Array& x, int axis = -1, bool descending = false, Loc loc = Loc::current());
// The k largest entries along the last axis, largest first, and their i32 indices (lax.top_k): NaN
// counts as the largest, equal entries keep their order; a partial selection, not a full sort.
std::pair<Array, Array> top_k(const Array& x, int64_t k, Loc loc = Loc::current());
// Where each entry of v would be inserted into the sorted 1-D array to keep it sorted (i32, v's
// shape): before equal entries for side "left", after them for "right"; NaN sorts last, as NumPy.
Array searchsorted(const Array& sorted, const Array& v, const std::string& side = "left", Loc loc = Loc::current());
Array one_hot(const Array& labels, int64_t n, DType dtype = default_float_dtype(), Loc loc = Loc::current());
// x's entries at `indices` along axis, indices of x's rank (other axes
// broadcast against x's), as np.take_along_axis; out-of-range entries clamp.
Array take_along_axis(const Array& x, const Array& indices, int axis, Loc loc = Loc::current());
// x with `values` put at `indices` along axis (the last of repeated entries
// wins), as np.put_along_axis but returning a new Array.
Array put_along_axis(const Array& x, const Array& indices, const Array& values, int axis, Loc loc = Loc::current());

// ---- matrices (the last two axes; leading axes are a batch)
// x with the entries above (tril) or below (triu) the k-th diagonal zeroed.
Array tril(const Array& x, int k = 0, Loc loc = Loc::current());
Array triu(const Array& x, int k = 0, Loc loc = Loc::current());
// A 2-D x's k-th diagonal, or a 1-D x made the k-th diagonal of a square matrix.
Array diag(const Array& x, int k = 0, Loc loc = Loc::current());
// The diagonal of the (axis1, axis2) planes, as a last axis (np.diagonal).
Array diagonal(const Array& x, int offset = 0, int axis1 = 0, int axis2 = 1, Loc loc = Loc::current());
// The sum of that diagonal (np.trace).
Array trace(const Array& x, int offset = 0, int axis1 = 0, int axis2 = 1, Loc loc = Loc::current());

// ---- linear algebra
// How a product computes, as jax.lax's precision and preferred_element_type: the result's dtype (the
// operands' promoted dtype when unset). A wider preferred type computes in it (bf16 operands with
// preferred f32 give the f32 product of their exact values; i8 with i32 does not wrap); a narrower
// one rounds the finished product. On the CPU every precision is full f32/f64 arithmetic.
enum class Precision { default_, high, highest };
struct DotOptions {
  Precision precision = Precision::default_;
  std::optional<DType> preferred_element_type;
};
Array matmul(const Array& a, const Array& b, Loc loc = Loc::current());
Array matmul(const Array& a, const Array& b, DotOptions options, Loc loc = Loc::current());
Array dot(const Array& a, const Array& b, Loc loc = Loc::current());  // NumPy's dot
// Explicit-output einsum over letters, e.g. "bij,bjk->bik"; implicit output (no "->")
// sorts the letters that appear once, as NumPy. A letter repeated within one operand takes
// that operand's diagonal ("ii->i"), summed when the output lacks it ("ii->" is the trace).
Array einsum(const std::string& spec, const std::vector<Array>& operands, Loc loc = Loc::current());
Array einsum(const std::string& spec, const std::vector<Array>& operands, DotOptions options, Loc loc = Loc::current());
Array dot_general(const Array& a, const Array& b, std::pair<std::vector<int>, std::vector<int>> contracting,
                  std::pair<std::vector<int>, std::vector<int>> batch = {}, Loc loc = Loc::current());
Array dot_general(const Array& a, const Array& b, std::pair<std::vector<int>, std::vector<int>> contracting,
                  std::pair<std::vector<int>, std::vector<int>> batch, DotOptions options, Loc loc = Loc::current());

}  // namespace graft

#include "graft/detail/ops_scalar.h"
