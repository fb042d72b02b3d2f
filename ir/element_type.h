// The C++ type of each dtype's elements, and dispatch over them: the one
// mapping from DType to storage that the API, the interpreter and the tests
// share.
#pragma once

#include <complex>
#include <cstdint>
#include <stdexcept>
#include <type_traits>

#include "graft/types.h"

namespace graft::ir {

// Calls f(std::type_identity<T>{}) with T the C++ type of dtype d's elements
// (bool, int8_t ... uint64_t, float16, bfloat16, float, double,
// std::complex<float>, std::complex<double>).
template <class F>
decltype(auto) visit_element_type(DType d, F&& f) {
  switch (d) {
    case DType::bool_: return f(std::type_identity<bool>{});
    case DType::i8: return f(std::type_identity<int8_t>{});
    case DType::i16: return f(std::type_identity<int16_t>{});
    case DType::i32: return f(std::type_identity<int32_t>{});
    case DType::i64: return f(std::type_identity<int64_t>{});
    case DType::u8: return f(std::type_identity<uint8_t>{});
    case DType::u16: return f(std::type_identity<uint16_t>{});
    case DType::u32: return f(std::type_identity<uint32_t>{});
    case DType::u64: return f(std::type_identity<uint64_t>{});
    case DType::f16: return f(std::type_identity<float16>{});
    case DType::bf16: return f(std::type_identity<bfloat16>{});
    case DType::f32: return f(std::type_identity<float>{});
    case DType::f64: return f(std::type_identity<double>{});
    case DType::c64: return f(std::type_identity<std::complex<float>>{});
    case DType::c128: return f(std::type_identity<std::complex<double>>{});
  }
  throw std::logic_error("unknown dtype");
}

template <class T>
inline constexpr bool is_half_type = std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;
template <class T>
inline constexpr bool is_complex_type =
    std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;

// The type a half's arithmetic runs in (float, as JAX's CPU backend); other types compute as themselves.
template <class T>
using compute_type = std::conditional_t<is_half_type<T>, float, T>;

// The dtype whose elements are T.
template <class T>
constexpr DType dtype_of_element() {
  if constexpr (std::is_same_v<T, bool>)
    return DType::bool_;
  else if constexpr (std::is_same_v<T, float16>)
    return DType::f16;
  else if constexpr (std::is_same_v<T, bfloat16>)
    return DType::bf16;
  else if constexpr (std::is_same_v<T, float>)
    return DType::f32;
  else if constexpr (std::is_same_v<T, double>)
    return DType::f64;
  else if constexpr (std::is_same_v<T, std::complex<float>>)
    return DType::c64;
  else if constexpr (std::is_same_v<T, std::complex<double>>)
    return DType::c128;
  else if constexpr (std::is_signed_v<T>) {
    if constexpr (sizeof(T) == 1)
      return DType::i8;
    else if constexpr (sizeof(T) == 2)
      return DType::i16;
    else if constexpr (sizeof(T) == 4)
      return DType::i32;
    else
      return DType::i64;
  } else {
    if constexpr (sizeof(T) == 1)
      return DType::u8;
    else if constexpr (sizeof(T) == 2)
      return DType::u16;
    else if constexpr (sizeof(T) == 4)
      return DType::u32;
    else
      return DType::u64;
  }
}

}  // namespace graft::ir
