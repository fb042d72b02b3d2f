// The CUDA C++ that starts every generated CUDA module (see prelude.cpp).
#pragma once

#include <string>

namespace graft::codegen::cuda {

// Holds the placeholder GCG_SCALAR_OPS, which the emitter replaces with
// interpreter/kernels/scalar_ops.h's text.
extern const char kPrelude[];

// Threads per block of every generated kernel (a multiple of the warp size).
inline constexpr int kThreadsPerBlock = 256;

// kPrelude with its placeholders filled: what a module's source starts with.
std::string prelude_text();

// Every `from` in `s` replaced by `to` (filling a source template's placeholders).
void replace_all(std::string& s, const std::string& from, const std::string& to);

}  // namespace graft::codegen::cuda
