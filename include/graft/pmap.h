// pmap: f run on several devices at once, one replica per index of the
// mapped axis. f is traced once on one replica's shapes; that per-device
// graph, with its collectives, is compiled once through the jit pipeline and
// run by every device at the same time (one thread per virtual CPU device,
// GRAFT_CPU_DEVICES), each replica allocating on its own device. Collectives
// over options.axis_name exchange values between the replicas.
//
// Results are sharded: shard i of every output lives on device i and holds
// index i of axis 0. Reading one (to_vector, an eager op) assembles it once;
// passing it to the next pmap call uses the shards where they are.
//
// Inside another transform (grad, vmap, jit) pmap is traced as its batched
// equivalent, vmap(f, in_axes, 0, axis_name), which computes the same values
// on the tracing device.
#pragma once

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "graft/device.h"
#include "graft/jit.h"
#include "graft/vmap.h"

namespace graft {

struct PmapOptions {
  std::string axis_name = "";    // the name collectives inside f use
  AxisSpec in_axes = 0;          // which axis of each argument is split over the devices (none: replicated)
  std::vector<Device> devices = {};  // default: the first n devices, n the mapped axis size
};

namespace detail {

// The devices n replicas run on, checked against what exists and was asked for.
std::vector<Device> pmap_devices(const std::vector<Device>& requested, int64_t n);
// Runs the per-device executable on every device; leaves are split along
// dims (-1: replicated); returns one sharded Array per output.
std::vector<Array> run_pmap(const Executable& exe, const std::vector<Array>& leaves, const std::vector<int64_t>& dims,
                            const std::vector<Device>& devices, const std::string& axis_name);

template <class F, class... Args>
auto pmap_impl(F& f, const PmapOptions& options, GraphCache& cache, const std::source_location& site,
               const Args&... args) {
  using Out = std::decay_t<decltype(f(args...))>;
  MappedLeaves mapped;
  std::vector<Device> devices;
  try {
    mapped = map_leaves(options.in_axes, args...);
    devices = pmap_devices(options.devices, mapped.size);
  } catch (const Error&) {
    rethrow_with_site("pmap", site);
  }
  auto& [leaves, dims, size] = mapped;
  if (tracing()) return Out(vmap_impl(f, options.in_axes, 0, options.axis_name, cache, site, args...));

  struct Entry {
    std::shared_ptr<const Executable> exe;
    Out out_like;
  };
  std::string key = signature_key("pmap", args...);
  std::shared_ptr<const Entry> entry;
  if (!key.empty()) entry = std::static_pointer_cast<const Entry>(cache.find(key));
  if (!entry) {
    cache.count_trace();
    double t0 = now_ms();
    auto traced = trace_example(f, leaves, dims, options.axis_name, size, args...);  // no enclosing trace: nothing captured
    double t1 = now_ms();
    entry = std::make_shared<const Entry>(
        Entry{compile_graph(traced.graph, JitOptions{}, {}, "pmap"), std::move(traced.out)});
    log_compile("pmap", t1 - t0, now_ms() - t1);
    if (!key.empty()) cache.insert(key, entry);
  }
  return tree::unflatten(entry->out_like, run_pmap(*entry->exe, leaves, dims, devices, options.axis_name));
}

}  // namespace detail

// pmap(f, options)(args...): see the top of this header.
template <class F>
auto pmap(F f, PmapOptions options = {}, std::source_location site = std::source_location::current()) {
  return [f, options = std::move(options), site, cache = std::make_shared<detail::GraphCache>()](const auto&... args) {
    return detail::pmap_impl(f, options, *cache, site, args...);
  };
}

// pmap(f, "i"): the leading axis of every argument mapped, collectives over "i".
template <class F>
auto pmap(F f, std::string axis_name, std::source_location site = std::source_location::current()) {
  return pmap(std::move(f), PmapOptions{.axis_name = std::move(axis_name)}, site);
}

}  // namespace graft
