// Between the public Device (a kind and an id) and the runtime's devices.
#pragma once

#include "graft/device.h"
#include "runtime/device.h"

namespace graft::detail {

struct ArrayImpl;

runtime::Device& runtime_device(const Device& d);  // throws graft::Error for a device that does not exist
Device public_device(const runtime::Device& d);
// Where fresh arrays (array, zeros, arange, load_npy, random keys, ops with
// no operands) live: the innermost DeviceScope's device (a pmap replica's),
// else default_device().
runtime::Device& placement_device();
// Where a fresh array's bytes are written by the CPU: placement_device(),
// or the host when that is a GPU (place_fresh then moves them). While
// tracing, the current device: a traced function's concrete values become
// constants, read on the host.
runtime::Device& fill_device();
// A fresh array filled on fill_device(), moved to placement_device() when
// that is elsewhere.
void place_fresh(ArrayImpl& impl);

}  // namespace graft::detail
