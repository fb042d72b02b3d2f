// Device-memory profiles that `go tool pprof` reads (-top, -traces, -diff_base).
#pragma once

#include <string>

#include "graft/device.h"

namespace graft::profiler {

// Writes a gzipped pprof profile of the device's live buffers (and the memory
// jit executables keep), each sample attributed to the user source location,
// op and named scopes that made it. Throws graft::Error if the file cannot be written.
void save_device_memory_profile(const std::string& path, const Device& device = default_device());

}  // namespace graft::profiler
