// The machinery behind graft/pmap.h: splitting arguments over replicas,
// tracing the per-device function and binding the pmap node.
// Not part of the API: names here may change.
#pragma once

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "graft/device.h"
#include "graft/jit.h"
#include "graft/vmap.h"

namespace graft {

namespace detail {

// The devices n replicas run on, checked against what exists and was asked for.
std::vector<Device> pmap_devices(const std::vector<Device>& requested, int64_t n);
// The backend replicas compile for: cuda on CUDA devices, else automatic.
Backend pmap_backend(const std::vector<Device>& devices);
// Runs the per-device executable on every device; leaves are split along
// dims (-1: replicated); returns one sharded Array per output.
// `donated` (per leaf, may be empty): leaves whose per-device pieces the outputs may take over.
std::vector<Array> run_pmap(const Executable& exe, const std::vector<Array>& leaves, const std::vector<int64_t>& dims,
                            const std::vector<Device>& devices, const std::string& axis_name,
                            const std::vector<bool>& donated);
// The replicas' results placed as out_dims says (-1: replica 0's alone); the
// donated arguments' Arrays deleted, as jit does.
std::vector<Array> place_pmap_outputs(std::vector<Array> sharded, const std::vector<int64_t>& out_dims);
void delete_donated(const std::vector<Array>& leaves, const std::vector<bool>& donated);

// Inside an enclosing trace: emits the pmap node running `body` (traced on
// one replica's shapes) over the leaves split along dims (mapped_size
// each) and the captured values replicated; its outputs are stacked along out_dims (-1: replica 0's).
std::vector<Array> pmap_bind(const Graph& body, const std::vector<Array>& captured, const std::vector<Array>& leaves,
                             const std::vector<int64_t>& dims, int64_t mapped_size,
                             const std::vector<int64_t>& out_dims, const std::vector<Device>& devices,
                             const std::string& axis_name, const std::source_location& site);

// Marks this thread as tracing a pmap's function, where a nested pmap runs as vmap.
class PmapBodyScope {
 public:
  PmapBodyScope();
  ~PmapBodyScope();
  PmapBodyScope(const PmapBodyScope&) = delete;
  PmapBodyScope& operator=(const PmapBodyScope&) = delete;
  static bool active();
};

// f traced on one replica's shapes, where a nested pmap runs as vmap.
template <class F, class... Args>
auto trace_replica(F& f, const std::vector<Array>& leaves, const std::vector<int64_t>& dims,
                   const std::string& axis_name, int64_t replicas, const Args&... args) {
  PmapBodyScope body;
  return trace_example(f, leaves, dims, axis_name, replicas, RefUse{}, args...);
}

// What a pmapped function caches per signature (at namespace scope, as
// JitEntry: functions with one result type share its instantiations).
template <class Out>
struct PmapEntry {
  std::shared_ptr<const Executable> exe;
  Out out_like;
  std::vector<int64_t> out_dims;  // per output leaf: its stacking axis, -1 for none
  std::vector<bool> donated;      // per argument leaf: the caller's Arrays to delete
  std::vector<bool> inside;       // per argument leaf: pieces the outputs may take over
};

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
  if (PmapBodyScope::active())
    return Out(vmap_impl(f, options.in_axes, options.out_axes, options.axis_name, cache, site, args...));
  // The axis spans every replica of every process.
  const auto replicas = static_cast<int64_t>(devices.size());
  if (tracing()) {
    auto traced = trace_replica(f, leaves, dims, options.axis_name, replicas, args...);
    std::vector<int64_t> out_ranks;
    for (const Array& a : tree::leaves(traced.out)) out_ranks.push_back(a.ndim() + 1);
    try {
      const std::vector<int64_t> out_dims =
          leaf_axes(options.out_axes, tree::shape(traced.out), out_ranks, "out_axes", "output");
      return tree::unflatten(
          traced.out, pmap_bind(traced.graph, traced.captured, leaves, dims, size, out_dims,
                                options.devices.empty() ? std::vector<Device>{} : devices, options.axis_name, site));
    } catch (const Error&) {
      rethrow_with_site("pmap", site);
    }
  }

  using Entry = PmapEntry<Out>;
  std::string key = signature_key("pmap", args...);
  std::shared_ptr<const Entry> entry;
  if (!key.empty()) entry = std::static_pointer_cast<const Entry>(cache.find(key));
  if (!entry) {
    cache.count_trace();
    double t0 = now_ms();
    auto traced =
        trace_replica(f, leaves, dims, options.axis_name, replicas, args...);  // no enclosing trace: nothing captured
    double t1 = now_ms();
    std::vector<int64_t> out_ranks;
    for (const Array& a : tree::leaves(traced.out)) out_ranks.push_back(a.ndim() + 1);
    std::vector<int64_t> out_dims;
    try {
      out_dims = leaf_axes(options.out_axes, tree::shape(traced.out), out_ranks, "out_axes", "output");
    } catch (const Error&) {
      rethrow_with_site("pmap", site);
    }
    // Only split (mapped) leaves are donated inside: a replicated buffer may be shared by the replicas.
    std::vector<bool> donated = donated_leaves(options.donate_argnums, args...);
    std::vector<bool> inside = donated;
    for (size_t i = 0; i < inside.size(); ++i) inside[i] = inside[i] && dims[i] >= 0;
    auto exe = compile_graph(traced.graph, JitOptions{.backend = pmap_backend(devices)}, inside);
    entry = std::make_shared<const Entry>(
        Entry{std::move(exe), std::move(traced.out), std::move(out_dims), std::move(donated), std::move(inside)});
    log_compile("pmap", t1 - t0, now_ms() - t1);
    if (!key.empty()) cache.insert(key, entry);
  }
  std::vector<Array> outs = run_pmap(*entry->exe, leaves, dims, devices, options.axis_name, entry->inside);
  delete_donated(leaves, entry->donated);
  return tree::unflatten(entry->out_like, place_pmap_outputs(std::move(outs), entry->out_dims));
}

}  // namespace detail

}  // namespace graft
