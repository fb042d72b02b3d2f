// Between the public Device (a kind and an id) and the runtime's devices.
#pragma once

#include "graft/device.h"
#include "runtime/device.h"

namespace graft::detail {

runtime::Device& runtime_device(const Device& d);  // throws graft::Error for a device that does not exist
Device public_device(const runtime::Device& d);

}  // namespace graft::detail
