// The text of interpreter/kernels/sum_order.h (the order graft sums floats
// in), compiled in at build time (cmake/EmbedText.cmake): the code generators
// splice it into their modules, so generated sums add in the interpreter's
// order from one definition.
#pragma once

#include <string>

namespace graft::codegen {

extern const char kSumOrderText[];

// sum_order.h's text for a module whose functions take the qualifiers
// `fn_qualifiers` ("inline", "__device__ __forceinline__"); the module has
// its fixed-width integer types already.
std::string sum_order_text(const std::string& fn_qualifiers);

}  // namespace graft::codegen
