// The templates behind graft/ops.h's functions that take a plain C++ number:
// each forwards to a non-template function with the number as a double and
// whether it was a floating type (weak typing, docs/API.md).
#pragma once

#include <optional>
#include <source_location>
#include <type_traits>

#include "graft/array.h"

namespace graft {
namespace detail {

enum class ScalarBinary { pow, maximum, minimum, atan2, remainder, floor_divide };
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

template <Scalar S>
Array pow(const Array& x, S y, Loc loc) {
  return detail::array_then_scalar<detail::ScalarBinary::pow>(x, y, loc);
}
template <Scalar S>
Array pow(S x, const Array& y, Loc loc) {
  return detail::scalar_then_array<detail::ScalarBinary::pow>(x, y, loc);
}
template <Scalar S>
Array maximum(const Array& x, S y, Loc loc) {
  return detail::array_then_scalar<detail::ScalarBinary::maximum>(x, y, loc);
}
template <Scalar S>
Array maximum(S x, const Array& y, Loc loc) {
  return detail::scalar_then_array<detail::ScalarBinary::maximum>(x, y, loc);
}
template <Scalar S>
Array minimum(const Array& x, S y, Loc loc) {
  return detail::array_then_scalar<detail::ScalarBinary::minimum>(x, y, loc);
}
template <Scalar S>
Array minimum(S x, const Array& y, Loc loc) {
  return detail::scalar_then_array<detail::ScalarBinary::minimum>(x, y, loc);
}
template <Scalar S>
Array atan2(const Array& y, S x, Loc loc) {
  return detail::array_then_scalar<detail::ScalarBinary::atan2>(y, x, loc);
}
template <Scalar S>
Array atan2(S y, const Array& x, Loc loc) {
  return detail::scalar_then_array<detail::ScalarBinary::atan2>(y, x, loc);
}
template <Scalar S>
Array remainder(const Array& x, S y, Loc loc) {
  return detail::array_then_scalar<detail::ScalarBinary::remainder>(x, y, loc);
}
template <Scalar S>
Array remainder(S x, const Array& y, Loc loc) {
  return detail::scalar_then_array<detail::ScalarBinary::remainder>(x, y, loc);
}
template <Scalar S>
Array floor_divide(const Array& x, S y, Loc loc) {
  return detail::array_then_scalar<detail::ScalarBinary::floor_divide>(x, y, loc);
}
template <Scalar S>
Array floor_divide(S x, const Array& y, Loc loc) {
  return detail::scalar_then_array<detail::ScalarBinary::floor_divide>(x, y, loc);
}
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
