// Sharded arrays: an Array whose axis 0 is spread over devices, one index
// per device (pmap's inputs and results).
#pragma once

#include <memory>
#include <vector>

#include "api/array_impl.h"
#include "runtime/device.h"

namespace graft::detail {

// Index i of `leaf`'s axis `dim` as a buffer on devices[i], for every i
// (dim -1: the whole leaf on every device). Shards already on the right
// devices are taken as they are; everything else is copied.
std::vector<runtime::BufferPtr> split_to_devices(const ArrayImpl& leaf, int64_t dim,
                                                 const std::vector<runtime::Device*>& devices);

// An Array of type [shards.size(), shard_type...] made of per-device buffers.
std::shared_ptr<ArrayImpl> make_sharded(const ir::ValueType& shard_type, std::vector<runtime::BufferPtr> shards);

}  // namespace graft::detail
