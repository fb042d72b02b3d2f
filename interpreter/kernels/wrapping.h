// Integer arithmetic wraps around (two's complement), as XLA's does, in every
// kernel that adds or multiplies elements: elementwise ops, reductions,
// cumulative ops, scatter_add and integer dot_general. Signed overflow is
// undefined in C++, so signed values go through their unsigned type; floats,
// bool and unsigned types use the plain operators.
#pragma once

#include <type_traits>

namespace graft::interpreter {

template <class T>
using Wrapped = typename std::conditional_t<std::is_integral_v<T> && std::is_signed_v<T>, std::make_unsigned<T>,
                                            std::type_identity<T>>::type;

template <class T>
T wrapping_add(T a, T b) {
  return static_cast<T>(static_cast<Wrapped<T>>(a) + static_cast<Wrapped<T>>(b));
}
template <class T>
T wrapping_sub(T a, T b) {
  return static_cast<T>(static_cast<Wrapped<T>>(a) - static_cast<Wrapped<T>>(b));
}
template <class T>
T wrapping_mul(T a, T b) {
  return static_cast<T>(static_cast<Wrapped<T>>(a) * static_cast<Wrapped<T>>(b));
}

}  // namespace graft::interpreter
