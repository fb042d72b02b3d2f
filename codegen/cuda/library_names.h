// Names the CUDA toolkit's libraries graft loads (NVRTC, cuBLAS, cuSOLVER,
// cuFFT) by finding their files, without loading them: build_info says what
// is installed, and a process that never uses a CUDA device maps none of them
// (loading them to read their names cost 220 MB of resident memory).
#pragma once

#include <string>

namespace graft::codegen::cuda {

// "NVRTC (libnvrtc.so.13); cuBLAS (libcublas.so.13); ..." with "no X (...)"
// for each one not found.
std::string cuda_libraries_description();

}  // namespace graft::codegen::cuda
