// The templates behind graft/ops.h's functions that take a plain C++ number:
// each forwards to a non-template function with the number as a double and
// whether it was a floating type (weak typing, docs/API.md).
#pragma once

#include <optional>
#include <type_traits>

#include "graft/array.h"
#include "graft/detail/source_location.h"

namespace graft {
namespace detail {

enum class ScalarBinary {
  pow,
  maximum,
  minimum,
  atan2,
  remainder,
  floor_divide,
  bitwise_and,
  bitwise_or,
  bitwise_xor,
  left_shift,
  right_shift
};
Array binary_scalar(ScalarBinary op, const Array& x, double value, bool is_float, bool scalar_first, const Loc& loc);
// where(cond, x, value), or where(cond, value, x) when scalar_first.
Array where_scalar(const Array& cond, const Array& x, double value, bool is_float, bool scalar_first, const Loc& loc);
Array arange_range(double start, double stop, double step, std::optional<DType> dtype, bool any_float, const Loc& loc);

template <ScalarBinary Op, Scalar S>
Array array_then_scalar(const Array& x, S y, const Loc& loc) {
  return binary_scalar(Op, x, static_cast<double>(y), std::is_floating_point_v<S>, false, loc);
}
template <ScalarBinary Op, Scalar S>
Array scalar_then_array(S x, const Array& y, const Loc& loc) {
  return binary_scalar(Op, y, static_cast<double>(x), std::is_floating_point_v<S>, true, loc);
}

}  // namespace detail

// The two overloads of each function declared in graft/ops.h.
#define GRAFT_DEFINE_WITH_SCALAR(name)                                       \
  template <Scalar S>                                                        \
  Array name(const Array& x, S y, Loc loc) {                                 \
    return detail::array_then_scalar<detail::ScalarBinary::name>(x, y, loc); \
  }                                                                          \
  template <Scalar S>                                                        \
  Array name(S x, const Array& y, Loc loc) {                                 \
    return detail::scalar_then_array<detail::ScalarBinary::name>(x, y, loc); \
  }
GRAFT_DEFINE_WITH_SCALAR(pow)
GRAFT_DEFINE_WITH_SCALAR(maximum)
GRAFT_DEFINE_WITH_SCALAR(minimum)
GRAFT_DEFINE_WITH_SCALAR(atan2)
GRAFT_DEFINE_WITH_SCALAR(remainder)
GRAFT_DEFINE_WITH_SCALAR(floor_divide)
GRAFT_DEFINE_WITH_SCALAR(bitwise_and)
GRAFT_DEFINE_WITH_SCALAR(bitwise_or)
GRAFT_DEFINE_WITH_SCALAR(bitwise_xor)
GRAFT_DEFINE_WITH_SCALAR(left_shift)
GRAFT_DEFINE_WITH_SCALAR(right_shift)
#undef GRAFT_DEFINE_WITH_SCALAR

template <Scalar S>
Array where(const Array& cond, const Array& x, S y, Loc loc) {
  return detail::where_scalar(cond, x, static_cast<double>(y), std::is_floating_point_v<S>, false, loc);
}
template <Scalar S>
Array where(const Array& cond, S x, const Array& y, Loc loc) {
  return detail::where_scalar(cond, y, static_cast<double>(x), std::is_floating_point_v<S>, true, loc);
}

template <Scalar A, Scalar B, Scalar C>
Array arange(A start, B stop, C step, Loc loc) {
  constexpr bool any_float = std::is_floating_point_v<A> || std::is_floating_point_v<B> || std::is_floating_point_v<C>;
  return detail::arange_range(static_cast<double>(start), static_cast<double>(stop), static_cast<double>(step),
                              std::nullopt, any_float, loc);
}
template <Scalar A, Scalar B, Scalar C>
Array arange(A start, B stop, C step, DType dtype, Loc loc) {
  return detail::arange_range(static_cast<double>(start), static_cast<double>(stop), static_cast<double>(step), dtype,
                              false, loc);
}
template <Scalar A, Scalar B>
Array arange(A start, B stop, DType dtype, Loc loc) {
  return detail::arange_range(static_cast<double>(start), static_cast<double>(stop), 1.0, dtype, false, loc);
}

}  // namespace graft
