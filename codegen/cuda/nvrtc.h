// NVRTC, CUDA's run-time compiler, loaded with dlopen at first use (never
// linked), so graft builds and runs where CUDA is absent.
#pragma once

#include <string>
#include <vector>

namespace graft::codegen::cuda {

struct NvrtcOutput {
  std::string image;  // a cubin, or PTX text (as_ptx)
  std::string log;    // the compiler's messages
};

// Whether NVRTC loads; when not, *why says what is missing.
bool nvrtc_available(std::string* why = nullptr);
// "NVRTC 13.0", or why it does not load.
std::string nvrtc_description();
// NVRTC's version as major * 1000 + minor * 10 (13000), 0 when absent.
int nvrtc_version();
// The architectures it compiles for (75 for sm_75), ascending.
std::vector<int> nvrtc_architectures();

// The options every module is compiled with (besides the architecture): no
// fast math, no fused multiply-add (the CPU side's -ffp-contract=off).
std::vector<std::string> nvrtc_options();

// Compiles a module for sm_<arch>: a cubin, or PTX for compute_<arch> when
// as_ptx. Throws UnsupportedError when NVRTC is missing or does not know
// the architecture, graft::Error with NVRTC's log when the source does not
// compile.
NvrtcOutput nvrtc_compile(const std::string& source, const std::string& name, int arch, bool as_ptx = false);

}  // namespace graft::codegen::cuda
