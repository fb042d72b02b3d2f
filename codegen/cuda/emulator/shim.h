// The host header the emulated driver puts before a generated CUDA module
// (see shim.cpp).
#pragma once

namespace graft::codegen::cuda::emulator {

extern const char kShim[];

}  // namespace graft::codegen::cuda::emulator
