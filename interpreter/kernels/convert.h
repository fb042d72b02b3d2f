// convert_element_type's rule for one element on the host, for every dtype:
// XLA's float-to-int (NaN gives 0, out of range saturates) from scalar_ops.h,
// plus the halves and complex numbers, which generated code does not see.
// A half is made as XLA's CPU backend makes it: its source is rounded to a
// float first (to nearest even), then the float to the half. (So a double or
// a wide integer can round twice: 1 + 2^-11 + 2^-40 gives f16 1.0, not the
// nearest 1 + 2^-10; JAX gives 1.0.)
#pragma once

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>

#include "interpreter/kernels/scalar_ops.h"
#include "ir/element_type.h"

namespace graft::interpreter {

// v converted to To, as XLA's convert_element_type (complex to real keeps the real part, as NumPy).
template <class To, class From>
To convert_element(From v) {
  if constexpr (ir::is_complex_type<From>) {
    if constexpr (std::is_same_v<To, bool>)
      return v.real() != 0 || v.imag() != 0;
    else if constexpr (ir::is_complex_type<To>)
      return To(static_cast<typename To::value_type>(v.real()), static_cast<typename To::value_type>(v.imag()));
    else
      return convert_element<To>(v.real());
  } else if constexpr (ir::is_half_type<From>) {
    return convert_element<To>(static_cast<float>(v));
  } else if constexpr (ir::is_complex_type<To>) {
    using R = typename To::value_type;
    return To(convert_element<R>(v), R(0));
  } else if constexpr (ir::is_half_type<To>) {
    return To(static_cast<float>(v));
  } else {
    return gcg_convert_element_type<To, From>(v);
  }
}

}  // namespace graft::interpreter
