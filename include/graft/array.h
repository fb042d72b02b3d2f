// graft::Array: one value-semantic handle for concrete arrays (outside
// transforms) and traced ones (inside them), so user code is written once.
#pragma once

#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <source_location>
#include <string>
#include <vector>

#include "graft/device.h"
#include "graft/types.h"

namespace graft {

namespace detail {
struct ArrayImpl;
}

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
  template <class T>
  std::vector<T> to_vector() const;
  template <class T>
  T item() const;  // the single element of a size-1 array

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
  Array T() const;  // axes reversed

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

// ---- creation
template <Scalar T>
Array array(std::initializer_list<T> values, std::source_location loc = std::source_location::current());
template <Scalar T>
Array array(const std::vector<T>& values, Shape shape, std::source_location loc = std::source_location::current());
Array scalar(double value, DType dtype = DType::f32, std::source_location loc = std::source_location::current());
Array zeros(Shape shape, DType dtype = DType::f32, std::source_location loc = std::source_location::current());
Array ones(Shape shape, DType dtype = DType::f32, std::source_location loc = std::source_location::current());
Array full(Shape shape, double value, DType dtype = DType::f32,
           std::source_location loc = std::source_location::current());
Array arange(int64_t n, DType dtype = DType::i32, std::source_location loc = std::source_location::current());
Array linspace(double start, double stop, int64_t n, std::source_location loc = std::source_location::current());
Array eye(int64_t n, std::source_location loc = std::source_location::current());

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

namespace detail {
enum class BinaryOp { add, sub, mul, div, lt, le, gt, ge, eq, ne };
// x (op) scalar, or scalar (op) x when scalar_first; is_float tells the scalar's kind.
Array binary_with_scalar(BinaryOp op, const Array& x, double value, bool is_float, bool scalar_first,
                         const std::source_location& loc);
}  // namespace detail

#define GRAFT_SCALAR_OPERATOR(sym, op)                                                        \
  template <Scalar S>                                                                         \
  Array operator sym(ArrayAt a, S s) {                                                        \
    return detail::binary_with_scalar(detail::BinaryOp::op, a.array, static_cast<double>(s), \
                                      std::is_floating_point_v<S>, false, a.loc);             \
  }                                                                                           \
  template <Scalar S>                                                                         \
  Array operator sym(S s, ArrayAt a) {                                                        \
    return detail::binary_with_scalar(detail::BinaryOp::op, a.array, static_cast<double>(s), \
                                      std::is_floating_point_v<S>, true, a.loc);              \
  }
GRAFT_SCALAR_OPERATOR(+, add)
GRAFT_SCALAR_OPERATOR(-, sub)
GRAFT_SCALAR_OPERATOR(*, mul)
GRAFT_SCALAR_OPERATOR(/, div)
GRAFT_SCALAR_OPERATOR(<, lt)
GRAFT_SCALAR_OPERATOR(<=, le)
GRAFT_SCALAR_OPERATOR(>, gt)
GRAFT_SCALAR_OPERATOR(>=, ge)
GRAFT_SCALAR_OPERATOR(==, eq)
GRAFT_SCALAR_OPERATOR(!=, ne)
#undef GRAFT_SCALAR_OPERATOR

}  // namespace graft
