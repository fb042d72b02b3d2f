// CUDA devices as runtime devices (runtime/device.h): one per GPU the driver
// reports (or per emulated device), each with a BFC allocator whose regions
// come from the driver's cuMemAlloc and with copies through the driver.
//
// Memory, as JAX does on a GPU: the allocator may take GRAFT_MEM_FRACTION
// (default 0.75) of the device's memory and preallocates all of it at first
// use unless GRAFT_PREALLOCATE=false. Under GRAFT_ALLOCATOR=platform it grows
// on demand instead (the BFC allocator still serves the buffers: device
// memory is never handed out one cuMemAlloc per buffer).
#pragma once

#include <string>
#include <vector>

#include "runtime/device.h"

namespace graft::codegen::cuda {

// Made at first use; empty when no driver is usable (cuda_available says why).
const std::vector<runtime::Device*>& cuda_devices();

// Whether `d` is a CUDA device (its id is then the driver's device ordinal).
inline bool is_cuda_device(const runtime::Device& d) { return d.kind() == "cuda"; }

// The current device, which a node kernel's `what` needs to be a CUDA one;
// throws Error naming `what` otherwise.
runtime::Device& cuda_device_here(const char* what);

// Whether a real (not emulated) GPU is present: then graft's default device
// and Backend::automatic are CUDA, as in JAX. Never throws.
bool real_gpu_present();

}  // namespace graft::codegen::cuda
