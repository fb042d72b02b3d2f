// graft::Array: one value-semantic handle for concrete arrays (outside
// transforms) and traced ones (inside them), so user code is written once.
#pragma once

#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "graft/detail/source_location.h"
#include "graft/device.h"
#include "graft/types.h"

namespace graft {

namespace detail {
struct ArrayImpl;
}

class IndexUpdate;
struct ScalarAt;
struct ArrayAt;

// One axis of a per-axis index list: Slice() is NumPy's ":", Slice(a, b) is
// a:b and Slice(a, b, s) is a:b:s (negative bounds count from the end, then
// clamp; a negative step walks backwards; std::nullopt leaves a bound open).
struct Slice {
  std::optional<int64_t> start, stop;
  int64_t step = 1;
  Slice() = default;
  Slice(std::optional<int64_t> start, std::optional<int64_t> stop, int64_t step = 1)
      : start(start), stop(stop), step(step) {}
};
// NumPy's None (np.newaxis) in an index list: a new axis of size 1 there;
// also vmap's "not mapped" axis (graft/vmap.h).
struct None {};
inline constexpr None none{};
// NumPy's Ellipsis (...) in an index list: as many whole axes as the other
// entries leave; at most one per list.
struct Ellipsis {};
inline constexpr Ellipsis ellipsis{};
// An entry of a per-axis index list: an integer (drops its axis), a Slice,
// none or ellipsis. Axes past the list are taken whole.
using Index = std::variant<int64_t, Slice, None, Ellipsis>;

class Array {
 public:
  Array();  // an empty handle; using it throws graft::Error
  explicit Array(std::shared_ptr<detail::ArrayImpl> impl);

  const Shape& shape() const;
  DType dtype() const;
  int ndim() const;
  int64_t size() const;    // number of elements
  int64_t nbytes() const;
  Device device() const;  // where the buffer lives (traced arrays: where they will run)

  bool is_traced() const;
  bool is_deleted() const;  // true after its buffer was donated
  bool valid() const { return impl_ != nullptr; }

  // The elements converted to T (row-major). Throws ConcretizationError on a
  // traced Array: inside a transform the values do not exist yet.
  // Errors name the caller's line.
  template <class T>
  std::vector<T> to_vector(std::source_location loc = std::source_location::current()) const;
  template <class T>
  T item(std::source_location loc = std::source_location::current()) const;  // the single element of a size-1 array

  const void* unsafe_buffer_pointer() const;  // the data address (donation checks)

  // The pieces of a sharded Array (a pmap result), one per device: shard i
  // is index i of axis 0, without that axis, on device i. An Array that is
  // not sharded is its own single shard.
  std::vector<Array> addressable_shards() const;

  // Truth of a size-1 array; throws ConcretizationError when traced (use
  // graft::where or graft::cond to branch on traced values).
  explicit operator bool() const;

  // x[i]: index axis 0 (dropping it); negative i counts from the end.
  Array operator[](int64_t i) const;
  // x[{0, Slice(1, 3)}]: NumPy's basic indexing, one entry per leading axis.
  Array operator[](const std::vector<Index>& index) const;
  Array T() const;  // axes reversed

  // x += y rebinds this handle to a new Array (x + y); the old one is untouched.
  Array& operator+=(ArrayAt other);
  Array& operator-=(ArrayAt other);
  Array& operator*=(ArrayAt other);
  Array& operator/=(ArrayAt other);
  Array& operator+=(ScalarAt other);
  Array& operator-=(ScalarAt other);
  Array& operator*=(ScalarAt other);
  Array& operator/=(ScalarAt other);

  // JAX's x.at[index]: functional updates, see IndexUpdate below.
  IndexUpdate at(int64_t i) const;
  IndexUpdate at(const Array& indices) const;
  IndexUpdate at(std::vector<Index> index) const;

  const std::shared_ptr<detail::ArrayImpl>& impl() const { return impl_; }

 private:
  std::shared_ptr<detail::ArrayImpl> impl_;
};

// A parameter that binds to an Array and remembers where the call was
// written: overloaded operators cannot take a defaulted source_location, but
// the constructor of their parameter can.
struct ArrayAt {
  ArrayAt(const Array& a, std::source_location loc = std::source_location::current()) : array(a), loc(loc) {}
  const Array& array;
  std::source_location loc;
};

template <class T>
concept Scalar = std::is_arithmetic_v<T>;

// A C++ number and where it was written (for compound assignment), weakly
// typed: it takes the Array's dtype unless its kind is higher.
struct ScalarAt {
  template <Scalar S>
  ScalarAt(S s, std::source_location loc = std::source_location::current())  // NOLINT: implicit by design
      : value(static_cast<double>(s)), is_float(std::is_floating_point_v<S>), loc(loc) {}
  double value;
  bool is_float;
  std::source_location loc;
};

// x.at(index): JAX's x.at[index]. Each method returns a new Array, x with the
// indexed entries replaced (set), added to (add; repeated indices
// accumulate), multiplied (mul), or combined by minimum/maximum; get reads
// them. index is an integer (along axis 0), an integer Array (its entries
// along axis 0), or a per-axis list of integers and Slices. As in JAX, an
// out-of-range integer entry is clamped by get and dropped by the updates;
// with repeated indices, set keeps the last update. Differentiable,
// batchable and jittable (everything lowers to gather, scatter_add and
// elementwise ops).
class IndexUpdate {
 public:
  Array get(std::source_location loc = std::source_location::current()) const;
  Array set(const Array& v, std::source_location loc = std::source_location::current()) const;
  Array add(const Array& v, std::source_location loc = std::source_location::current()) const;
  Array mul(const Array& v, std::source_location loc = std::source_location::current()) const;
  Array min(const Array& v, std::source_location loc = std::source_location::current()) const;
  Array max(const Array& v, std::source_location loc = std::source_location::current()) const;
  Array set(ScalarAt v) const;
  Array add(ScalarAt v) const;
  Array mul(ScalarAt v) const;
  Array min(ScalarAt v) const;
  Array max(ScalarAt v) const;

  enum class Kind { integer, array, list };
  enum class Update { set, add, mul, min, max };

 private:
  friend class Array;
  IndexUpdate(const Array& x, Kind kind) : x_(x), kind_(kind) {}
  Array apply(Update u, const Array& v, const std::source_location& loc) const;
  Array apply(Update u, ScalarAt v) const;
  Array x_;
  Kind kind_;
  int64_t i_ = 0;
  Array indices_;
  std::vector<Index> list_;
};

// Prints values, dtype and shape, as JAX's repr: Array([1., 2.], dtype=f32, shape=(2,)).
// Arrays of more than 1000 elements are summarised (the first and last 3 along each axis).
std::ostream& operator<<(std::ostream& os, const Array& x);

// ---- creation
// The default float and integer dtypes: f32 and i32, or f64 and i64 when the
// environment sets GRAFT_ENABLE_X64=1 at start-up (as jax_enable_x64). They
// are the creation functions' and random's defaults, and the dtypes weak C++
// numbers and integer inputs to float functions compute in.
DType default_float_dtype();
DType default_int_dtype();

template <Scalar T>
Array array(std::initializer_list<T> values, std::source_location loc = std::source_location::current());
template <Scalar T>
Array array(const std::vector<T>& values, Shape shape, std::source_location loc = std::source_location::current());
// Nested lists, as np.array: array({{1, 2}, {3, 4}}) is 2x2; ragged rows are a ShapeError.
template <Scalar T>
Array array(std::initializer_list<std::initializer_list<T>> rows,
            std::source_location loc = std::source_location::current());
template <Scalar T>
Array array(std::initializer_list<std::initializer_list<std::initializer_list<T>>> planes,
            std::source_location loc = std::source_location::current());
Array scalar(double value, DType dtype = default_float_dtype(), std::source_location loc = std::source_location::current());
Array zeros(Shape shape, DType dtype = default_float_dtype(), std::source_location loc = std::source_location::current());
Array ones(Shape shape, DType dtype = default_float_dtype(), std::source_location loc = std::source_location::current());
Array full(Shape shape, double value, DType dtype = default_float_dtype(),
           std::source_location loc = std::source_location::current());
Array arange(int64_t n, DType dtype = default_int_dtype(), std::source_location loc = std::source_location::current());
// n values from start to stop (stop included unless endpoint is false), as np.linspace.
Array linspace(double start, double stop, int64_t n, DType dtype = default_float_dtype(), bool endpoint = true,
               std::source_location loc = std::source_location::current());
Array eye(int64_t n, DType dtype = default_float_dtype(), std::source_location loc = std::source_location::current());
// Arrays of x's shape (and dtype, unless one is given) filled with 0, 1 or value.
Array zeros_like(const Array& x, std::optional<DType> dtype = {}, std::source_location loc = std::source_location::current());
Array ones_like(const Array& x, std::optional<DType> dtype = {}, std::source_location loc = std::source_location::current());
Array full_like(const Array& x, double value, std::optional<DType> dtype = {},
                std::source_location loc = std::source_location::current());

// ---- operators (NumPy broadcasting; C++ scalars are weakly typed)
Array operator+(ArrayAt a, const Array& b);
Array operator-(ArrayAt a, const Array& b);
Array operator*(ArrayAt a, const Array& b);
Array operator/(ArrayAt a, const Array& b);
Array operator<(ArrayAt a, const Array& b);
Array operator<=(ArrayAt a, const Array& b);
Array operator>(ArrayAt a, const Array& b);
Array operator>=(ArrayAt a, const Array& b);
Array operator==(ArrayAt a, const Array& b);
Array operator!=(ArrayAt a, const Array& b);
Array operator-(ArrayAt a);
Array operator%(ArrayAt a, const Array& b);  // NumPy's remainder: the sign of b
Array operator&(ArrayAt a, const Array& b);  // bitwise_and (integers, bool)
Array operator|(ArrayAt a, const Array& b);  // bitwise_or
Array operator^(ArrayAt a, const Array& b);  // bitwise_xor
Array operator~(ArrayAt a);                  // bitwise_not
Array operator<<(ArrayAt a, const Array& b);  // left_shift (integers)
Array operator>>(ArrayAt a, const Array& b);  // right_shift: arithmetic for signed, logical for unsigned

// The operators with a plain C++ number on either side. The number is
// weakly typed: it takes the array's dtype unless its kind is higher (an
// int array and 2.5 give f32), as in JAX. (Defined in graft/detail/array_operators.h.)
template <Scalar S>
Array operator+(ArrayAt a, S s);  // x + s
template <Scalar S>
Array operator+(S s, ArrayAt a);
template <Scalar S>
Array operator-(ArrayAt a, S s);  // x - s
template <Scalar S>
Array operator-(S s, ArrayAt a);
template <Scalar S>
Array operator*(ArrayAt a, S s);  // x * s
template <Scalar S>
Array operator*(S s, ArrayAt a);
template <Scalar S>
Array operator/(ArrayAt a, S s);  // x / s (integers: XLA division, x / 0 = -1)
template <Scalar S>
Array operator/(S s, ArrayAt a);
template <Scalar S>
Array operator<(ArrayAt a, S s);  // bool
template <Scalar S>
Array operator<(S s, ArrayAt a);
template <Scalar S>
Array operator<=(ArrayAt a, S s);  // bool
template <Scalar S>
Array operator<=(S s, ArrayAt a);
template <Scalar S>
Array operator>(ArrayAt a, S s);  // bool
template <Scalar S>
Array operator>(S s, ArrayAt a);
template <Scalar S>
Array operator>=(ArrayAt a, S s);  // bool
template <Scalar S>
Array operator>=(S s, ArrayAt a);
template <Scalar S>
Array operator==(ArrayAt a, S s);  // bool
template <Scalar S>
Array operator==(S s, ArrayAt a);
template <Scalar S>
Array operator!=(ArrayAt a, S s);  // bool
template <Scalar S>
Array operator!=(S s, ArrayAt a);
template <Scalar S>
Array operator%(ArrayAt a, S s);  // NumPy's remainder: the sign of the divisor
template <Scalar S>
Array operator%(S s, ArrayAt a);

}  // namespace graft

#include "graft/detail/array_operators.h"
