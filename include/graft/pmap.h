// pmap: f run on several devices at once, one replica per index of the
// mapped axis. f is traced once on one replica's shapes; that per-device
// graph, with its collectives, is compiled once through the jit pipeline and
// run by every device at the same time (one thread per virtual CPU device,
// GRAFT_CPU_DEVICES), each replica allocating on its own device. Collectives
// over options.axis_name exchange values between the replicas.
//
// After distributed::initialize() in several processes, the replicas are
// every process's devices (process-major): each process passes the slices
// for its own devices, gets its own shards back, and collectives span all
// replicas (see <graft/distributed.h>).
//
// Results are sharded: shard i of every output lives on device i and holds
// index i of axis 0. Reading one (to_vector, an eager op) assembles it once;
// passing it to the next pmap call uses the shards where they are.
//
// Inside another transform (jit, grad, vjp, jvp, vmap, make_graph) pmap is
// a primitive: f's per-replica graph becomes the body of one `pmap` node,
// which runs replicated over the devices (and processes) when the program
// runs, differentiates to pmap nodes (the backward pass recomputes the
// body's forward values on each replica, as checkpoint does), and batches
// to a pmap over a batched body, as JAX's xla_pmap does. A pmap nested in
// another pmap's function runs as vmap over its axis on each outer replica.
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
  // Where each output stacks the replicas' results: an axis, or none for an
  // output that is the same on every replica (replica 0's is returned, once).
  AxisSpec out_axes = 0;
  std::vector<Device> devices = {};  // default: the first n devices, n the mapped axis size
  // Arguments whose buffers the outputs may take over; the caller's Arrays are deleted.
  std::vector<int> donate_argnums = {};
};

}  // namespace graft

#include "graft/detail/pmap.h"

namespace graft {

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
