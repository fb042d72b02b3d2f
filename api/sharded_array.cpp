#include "api/sharded_array.h"

#include <cstring>
#include <mutex>

#include "api/dispatch.h"
#include "graft/array.h"
#include "graft/errors.h"
#include "interpreter/axis_slices.h"
#include "runtime/device.h"
#include "ir/dtype.h"

namespace graft::detail {
namespace {

// The type of one index of `type`'s axis `dim`.
ir::ValueType without_axis(const ir::ValueType& type, int64_t dim) {
  ir::ValueType t = type;
  t.shape.erase(t.shape.begin() + dim);
  return t;
}

}  // namespace

const runtime::BufferPtr& data_buffer(const ArrayImpl& impl) {
  if (impl.deleted)
    throw DonatedArrayError("the " + ir::type_str(impl.type) + " Array's buffer was donated to a jitted call and is deleted");
  if (impl.buffer || impl.shards.empty()) return impl.buffer;
  // Assembling is a cache of the shards' contents, so it may fill `buffer` of
  // a const Array; one lock serialises the rare first reads.
  static std::mutex assembling;
  std::lock_guard lock(assembling);
  auto& self = const_cast<ArrayImpl&>(impl);
  if (!self.buffer) {
    const size_t piece = impl.shards[0]->size();
    auto whole = std::make_shared<runtime::Buffer>(piece * impl.shards.size());
    for (size_t i = 0; i < impl.shards.size(); ++i)
      runtime::copy_bytes(whole->device(), static_cast<char*>(whole->data()) + i * piece, impl.shards[i]->device(),
                          impl.shards[i]->data(), piece);
    self.buffer = std::move(whole);
  }
  return self.buffer;
}

runtime::BufferPtr host_buffer(const ArrayImpl& impl) {
  const runtime::BufferPtr& b = data_buffer(impl);
  if (!b || b->device().host_addressable()) return b;
  return runtime::copy_onto(runtime::host_device(), *b);
}

std::vector<runtime::BufferPtr> split_to_devices(const ArrayImpl& leaf, int64_t dim,
                                                 const std::vector<runtime::Device*>& devices) {
  const size_t n = devices.size();
  std::vector<runtime::BufferPtr> out(n);
  if (dim == 0 && leaf.shards.size() == n) {
    bool in_place = true;
    for (size_t i = 0; i < n; ++i) in_place = in_place && &leaf.shards[i]->device() == devices[i];
    if (in_place) return leaf.shards;
  }
  const runtime::BufferPtr whole = host_buffer(leaf);
  if (dim < 0) {  // replicated: a copy on every device it is not on already
    for (size_t i = 0; i < n; ++i) {
      if (&whole->device() == devices[i]) {
        out[i] = whole;
        continue;
      }
      out[i] = runtime::copy_onto(*devices[i], *whole);
    }
    return out;
  }
  const ir::ValueType part = without_axis(leaf.type, dim);
  const interpreter::AxisSlices slices = interpreter::axis_slices(leaf.type, dim);
  for (size_t i = 0; i < n; ++i) {
    out[i] = std::make_shared<runtime::Buffer>(part.num_bytes(), *devices[i]);
    if (devices[i]->host_addressable()) {
      interpreter::copy_slice_out(whole->data(), out[i]->data(), slices, i);
    } else {  // sliced on the host, then copied to the GPU
      runtime::Buffer staging(part.num_bytes(), runtime::host_device());
      interpreter::copy_slice_out(whole->data(), staging.data(), slices, i);
      runtime::copy_buffer(*out[i], staging, part.num_bytes());
    }
  }
  return out;
}

std::shared_ptr<ArrayImpl> make_sharded(const ir::ValueType& shard_type, std::vector<runtime::BufferPtr> shards) {
  auto impl = std::make_shared<ArrayImpl>();
  impl->type = shard_type;
  impl->type.shape.insert(impl->type.shape.begin(), static_cast<int64_t>(shards.size()));
  impl->shards = std::move(shards);
  return impl;
}

}  // namespace graft::detail

namespace graft {

std::vector<Array> Array::addressable_shards() const {
  const detail::ArrayImpl& impl = detail::checked_impl(*this, "addressable_shards");
  if (impl.traced())
    throw ConcretizationError("addressable_shards needs a concrete Array; this one (" + ir::type_str(impl.type) +
                              ") is traced inside a transform");
  if (impl.shards.empty()) return {*this};
  const ir::ValueType part = detail::without_axis(impl.type, 0);
  std::vector<Array> out;
  for (const runtime::BufferPtr& s : impl.shards) out.emplace_back(detail::make_concrete(part, s));
  return out;
}

}  // namespace graft
