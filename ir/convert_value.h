// The element rule of convert_element_type, for every place that converts
// one element (the interpreter's kernel, arrays made from C++ numbers):
// float to integer saturates and maps NaN to 0, where C++ leaves both
// undefined; to bool is "not zero".
#pragma once

#include <cmath>
#include <limits>
#include <type_traits>

namespace graft::ir {

template <class To, class From>
To convert_value(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    if (std::isnan(v)) return 0;
    if (v <= static_cast<From>(std::numeric_limits<To>::min())) return std::numeric_limits<To>::min();
    if (v >= static_cast<From>(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
    return static_cast<To>(v);
  } else {
    return static_cast<To>(v);
  }
}

}  // namespace graft::ir
