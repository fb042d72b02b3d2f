// The templates behind graft/array.h's operators with a plain C++ number on
// either side: each forwards to one non-template function with the number as
// a double and whether it was a floating type (weak typing, docs/API.md).
#pragma once

#include <type_traits>

#include "graft/array.h"
#include "graft/detail/source_location.h"

namespace graft {
namespace detail {

enum class BinaryOp { add, sub, mul, div, lt, le, gt, ge, eq, ne, rem, bit_and, bit_or, bit_xor, shl, shr };
// x (op) scalar, or scalar (op) x when scalar_first; is_float tells the scalar's kind.
Array binary_with_scalar(BinaryOp op, const Array& x, double value, bool is_float, bool scalar_first,
                         const std::source_location& loc);

}  // namespace detail

// The two overloads of each operator declared in graft/array.h.
#define GRAFT_DEFINE_SCALAR_OPERATOR(sym, op)                                                \
  template <Scalar S>                                                                        \
  Array operator sym(ArrayAt a, S s) {                                                       \
    return detail::binary_with_scalar(detail::BinaryOp::op, a.array, static_cast<double>(s), \
                                      std::is_floating_point_v<S>, false, a.loc);            \
  }                                                                                          \
  template <Scalar S>                                                                        \
  Array operator sym(S s, ArrayAt a) {                                                       \
    return detail::binary_with_scalar(detail::BinaryOp::op, a.array, static_cast<double>(s), \
                                      std::is_floating_point_v<S>, true, a.loc);             \
  }
GRAFT_DEFINE_SCALAR_OPERATOR(+, add)
GRAFT_DEFINE_SCALAR_OPERATOR(-, sub)
GRAFT_DEFINE_SCALAR_OPERATOR(*, mul)
GRAFT_DEFINE_SCALAR_OPERATOR(/, div)
GRAFT_DEFINE_SCALAR_OPERATOR(<, lt)
GRAFT_DEFINE_SCALAR_OPERATOR(<=, le)
GRAFT_DEFINE_SCALAR_OPERATOR(>, gt)
GRAFT_DEFINE_SCALAR_OPERATOR(>=, ge)
GRAFT_DEFINE_SCALAR_OPERATOR(==, eq)
GRAFT_DEFINE_SCALAR_OPERATOR(!=, ne)
GRAFT_DEFINE_SCALAR_OPERATOR(%, rem)
GRAFT_DEFINE_SCALAR_OPERATOR(&, bit_and)
GRAFT_DEFINE_SCALAR_OPERATOR(|, bit_or)
GRAFT_DEFINE_SCALAR_OPERATOR(^, bit_xor)
GRAFT_DEFINE_SCALAR_OPERATOR(<<, shl)
GRAFT_DEFINE_SCALAR_OPERATOR(>>, shr)
#undef GRAFT_DEFINE_SCALAR_OPERATOR

}  // namespace graft
