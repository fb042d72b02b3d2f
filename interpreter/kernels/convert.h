// convert_element_type's rule for one element on the host, for every dtype:
// XLA's float-to-int (NaN gives 0, out of range saturates) from scalar_ops.h,
// complex_ops.h's conversions of complex numbers, and the halves through
// float (generated code computes a half as its float too: codegen/cpu/
// elementwise.cpp).
// A half is made as XLA's CPU backend makes it: its source is rounded to a
// float first (to nearest even), then the float to the half. (So a double or
// a wide integer can round twice: 1 + 2^-11 + 2^-40 gives f16 1.0, not the
// nearest 1 + 2^-10; JAX gives 1.0.)
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
