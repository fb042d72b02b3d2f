// convert_element_type's rule for one element on the host, for every dtype:
// XLA's float-to-int (NaN gives 0, out of range saturates) from scalar_ops.h,
// complex_ops.h's conversions of complex numbers, and the halves through
// float (generated code computes a half as its float too: codegen/cpu/
// elementwise.cpp).
// A half is made as JAX makes it: an f16 from a double is rounded once to
// nearest even (f64 1 + 2^-11 + 2^-40 gives 1 + 2^-10, as NumPy, and XLA on
// CPUs with AVX512-FP16; elsewhere XLA rounds through f32 and gives 1), a
// bf16 from a double through f32, rounding twice (1 + 2^-8 + 2^-40 gives 1, as
// JAX and ml_dtypes); integers reach both through f32 (exact where it matters:
// beyond 2^24 an f16 is inf and a bf16 keeps 8 bits).
#pragma once

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>

#include "interpreter/kernels/complex_ops.h"
#include "interpreter/kernels/scalar_ops.h"
#include "ir/element_type.h"

namespace graft::interpreter {

// v converted to To, as XLA's convert_element_type (complex to real keeps the real part, as NumPy).
template <class To, class From>
To convert_element(From v) {
  if constexpr (ir::is_half_type<From>) {
    return convert_element<To>(static_cast<float>(v));
  } else if constexpr (std::is_same_v<To, float16> &&
                       (std::is_same_v<From, double> || std::is_same_v<From, std::complex<double>>)) {
    return float16::from_bits(half_bits::f16_of_double(std::real(v)));  // rounded once, as JAX
  } else if constexpr (ir::is_half_type<To> && ir::is_complex_type<From>) {
    return To(gcg_c_convert<float>(v));
  } else if constexpr (ir::is_complex_type<From> || ir::is_complex_type<To>) {
    return gcg_c_convert<To>(v);  // complex_ops.h
  } else if constexpr (ir::is_half_type<To>) {
    return To(static_cast<float>(v));
  } else {
    return gcg_convert_element_type<To, From>(v);
  }
}

}  // namespace graft::interpreter
