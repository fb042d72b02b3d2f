// The templates behind graft/array.h's operators with a plain C++ number on
// either side: each forwards to one non-template function with the number as
// a double and whether it was a floating type (weak typing, docs/API.md).
#pragma once

#include <source_location>
#include <type_traits>

#include "graft/array.h"

namespace graft {
namespace detail {

enum class BinaryOp { add, sub, mul, div, lt, le, gt, ge, eq, ne, rem };
// x (op) scalar, or scalar (op) x when scalar_first; is_float tells the scalar's kind.
Array binary_with_scalar(BinaryOp op, const Array& x, double value, bool is_float, bool scalar_first,
                         const std::source_location& loc);

}  // namespace detail

template <Scalar S>
Array operator+(ArrayAt a, S s) {
  return detail::binary_with_scalar(detail::BinaryOp::add, a.array, static_cast<double>(s), std::is_floating_point_v<S>,
                                    false, a.loc);
}
template <Scalar S>
Array operator+(S s, ArrayAt a) {
  return detail::binary_with_scalar(detail::BinaryOp::add, a.array, static_cast<double>(s), std::is_floating_point_v<S>,
                                    true, a.loc);
}
template <Scalar S>
Array operator-(ArrayAt a, S s) {
  return detail::binary_with_scalar(detail::BinaryOp::sub, a.array, static_cast<double>(s), std::is_floating_point_v<S>,
                                    false, a.loc);
}
template <Scalar S>
Array operator-(S s, ArrayAt a) {
  return detail::binary_with_scalar(detail::BinaryOp::sub, a.array, static_cast<double>(s), std::is_floating_point_v<S>,
                                    true, a.loc);
}
template <Scalar S>
Array operator*(ArrayAt a, S s) {
  return detail::binary_with_scalar(detail::BinaryOp::mul, a.array, static_cast<double>(s), std::is_floating_point_v<S>,
                                    false, a.loc);
}
template <Scalar S>
Array operator*(S s, ArrayAt a) {
  return detail::binary_with_scalar(detail::BinaryOp::mul, a.array, static_cast<double>(s), std::is_floating_point_v<S>,
                                    true, a.loc);
}
template <Scalar S>
Array operator/(ArrayAt a, S s) {
  return detail::binary_with_scalar(detail::BinaryOp::div, a.array, static_cast<double>(s), std::is_floating_point_v<S>,
                                    false, a.loc);
}
template <Scalar S>
Array operator/(S s, ArrayAt a) {
  return detail::binary_with_scalar(detail::BinaryOp::div, a.array, static_cast<double>(s), std::is_floating_point_v<S>,
                                    true, a.loc);
}
template <Scalar S>
Array operator<(ArrayAt a, S s) {
  return detail::binary_with_scalar(detail::BinaryOp::lt, a.array, static_cast<double>(s), std::is_floating_point_v<S>,
                                    false, a.loc);
}
template <Scalar S>
Array operator<(S s, ArrayAt a) {
  return detail::binary_with_scalar(detail::BinaryOp::lt, a.array, static_cast<double>(s), std::is_floating_point_v<S>,
                                    true, a.loc);
}
template <Scalar S>
Array operator<=(ArrayAt a, S s) {
  return detail::binary_with_scalar(detail::BinaryOp::le, a.array, static_cast<double>(s), std::is_floating_point_v<S>,
                                    false, a.loc);
}
template <Scalar S>
Array operator<=(S s, ArrayAt a) {
  return detail::binary_with_scalar(detail::BinaryOp::le, a.array, static_cast<double>(s), std::is_floating_point_v<S>,
                                    true, a.loc);
}
template <Scalar S>
Array operator>(ArrayAt a, S s) {
  return detail::binary_with_scalar(detail::BinaryOp::gt, a.array, static_cast<double>(s), std::is_floating_point_v<S>,
                                    false, a.loc);
}
template <Scalar S>
Array operator>(S s, ArrayAt a) {
  return detail::binary_with_scalar(detail::BinaryOp::gt, a.array, static_cast<double>(s), std::is_floating_point_v<S>,
                                    true, a.loc);
}
template <Scalar S>
Array operator>=(ArrayAt a, S s) {
  return detail::binary_with_scalar(detail::BinaryOp::ge, a.array, static_cast<double>(s), std::is_floating_point_v<S>,
                                    false, a.loc);
}
template <Scalar S>
Array operator>=(S s, ArrayAt a) {
  return detail::binary_with_scalar(detail::BinaryOp::ge, a.array, static_cast<double>(s), std::is_floating_point_v<S>,
                                    true, a.loc);
}
template <Scalar S>
Array operator==(ArrayAt a, S s) {
  return detail::binary_with_scalar(detail::BinaryOp::eq, a.array, static_cast<double>(s), std::is_floating_point_v<S>,
                                    false, a.loc);
}
template <Scalar S>
Array operator==(S s, ArrayAt a) {
  return detail::binary_with_scalar(detail::BinaryOp::eq, a.array, static_cast<double>(s), std::is_floating_point_v<S>,
                                    true, a.loc);
}
template <Scalar S>
Array operator!=(ArrayAt a, S s) {
  return detail::binary_with_scalar(detail::BinaryOp::ne, a.array, static_cast<double>(s), std::is_floating_point_v<S>,
                                    false, a.loc);
}
template <Scalar S>
Array operator!=(S s, ArrayAt a) {
  return detail::binary_with_scalar(detail::BinaryOp::ne, a.array, static_cast<double>(s), std::is_floating_point_v<S>,
                                    true, a.loc);
}
template <Scalar S>
Array operator%(ArrayAt a, S s) {
  return detail::binary_with_scalar(detail::BinaryOp::rem, a.array, static_cast<double>(s), std::is_floating_point_v<S>,
                                    false, a.loc);
}
template <Scalar S>
Array operator%(S s, ArrayAt a) {
  return detail::binary_with_scalar(detail::BinaryOp::rem, a.array, static_cast<double>(s), std::is_floating_point_v<S>,
                                    true, a.loc);
}

}  // namespace graft
