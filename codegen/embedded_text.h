// Headers the interpreter compiles and the code generators splice into their
// modules as text, compiled in at build time (cmake/EmbedText.cmake): one
// definition of each op's scalar semantics and of the float sum order for
// every backend.
#pragma once

#include <string>

namespace graft::codegen {

extern const char kHalfBitsText[];          // include/graft/detail/half_bits.h
extern const char kScalarOpsText[];         // interpreter/kernels/scalar_ops.h
extern const char kSpecialFunctionsText[];  // interpreter/kernels/special_functions.h
extern const char kSumOrderText[];          // interpreter/kernels/sum_order.h
extern const char kComplexOpsText[];        // interpreter/kernels/complex_ops.h
extern const char kComplexDeviceText[];     // codegen/cuda/complex_device.h

// half_bits.h's text, then scalar_ops.h's and special_functions.h's, for a module that has defined GCG_FN, GCG_LIBM and
// its fixed-width integer types and limits.
std::string scalar_ops_text();

// complex_ops.h's text, for a host module that has included <complex> and
// scalar_ops_text() already.
std::string complex_ops_text();

// complex_ops.h's text for a CUDA module, after scalar_ops_text(): on the
// GPU over complex_device.h's std::complex, under the emulated driver over <complex>.
std::string cuda_complex_ops_text();

// sum_order.h's text for a module whose functions take the qualifiers
// `fn_qualifiers` ("inline", "__device__ __forceinline__"); the module has
// its fixed-width integer types already.
std::string sum_order_text(const std::string& fn_qualifiers);

}  // namespace graft::codegen
