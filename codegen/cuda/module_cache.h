// The disk cache of NVRTC's output: $GRAFT_CACHE_DIR/cuda (beside the CPU
// modules' cpu/), one <hash>.bin per module with <hash>.key holding its whole
// key (the source, NVRTC's version, the options, the architecture and
// whether it is PTX), compared on every hit so a hash collision cannot load
// a wrong module. Files are written under temporary names and renamed.
#pragma once

#include <string>

namespace graft::codegen::cuda {

// The module image for sm_<arch> (PTX when as_ptx): from the disk cache, or
// compiled by NVRTC and stored there (a cache that cannot be written is
// skipped).
std::string cached_module_image(const std::string& source, const std::string& name, int arch, bool as_ptx);

// Where the images are cached (reads the environment now).
std::string cuda_cache_dir();

}  // namespace graft::codegen::cuda
