// vmap: f mapped over an axis of its arguments, as one batched computation.
// The function is traced once on one example's shapes; the graph is then
// rewritten by every op's batching rule (transforms/vmap.cpp), so a mapped
// matmul is one batched matmul, not a loop.
#pragma once

#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "graft/array.h"
#include "graft/autodiff.h"
#include "graft/collectives.h"
#include "graft/detail/source_location.h"
#include "graft/errors.h"
#include "graft/graph.h"
#include "graft/graph_cache.h"
#include "graft/make_graph.h"
#include "graft/tree.h"

namespace graft {

// `none` (graft/array.h) as an axis: the argument is the same for every
// example, or the output does not vary along the mapped axis.

struct Axes;

// An axis specification: an axis number (negative counts from the end), none,
// or Axes{...} with one entry per argument (per element of a returned tuple),
// nested to match pytree arguments. An int or none applies to every leaf below it.
class AxisSpec {
 public:
  AxisSpec(int axis) : kind_(Kind::axis), axis_(axis) {}  // NOLINT: implicit, so Axes{0, none} reads naturally
  AxisSpec(None) : kind_(Kind::none) {}                   // NOLINT
  AxisSpec(const Axes& axes);                              // NOLINT

  enum class Kind { axis, none, list };
  Kind kind() const { return kind_; }
  int axis() const { return axis_; }
  const std::vector<AxisSpec>& items() const { return *items_; }

 private:
  Kind kind_;
  int axis_ = 0;
  std::shared_ptr<const std::vector<AxisSpec>> items_;
};

struct Axes {
  Axes(std::initializer_list<AxisSpec> items) : items(items) {}
  std::vector<AxisSpec> items;
};

inline AxisSpec::AxisSpec(const Axes& axes)
    : kind_(Kind::list), items_(std::make_shared<const std::vector<AxisSpec>>(axes.items)) {}

}  // namespace graft

#include "graft/detail/vmap.h"

namespace graft {

// vmap(f, in_axes, out_axes, axis_name)(args...): f applied to every example
// along the mapped axes, results stacked along out_axes. Collectives inside f
// over axis_name (psum, all_gather, axis_index, ...) act across the examples.
// The wrapper traces f at every call (arrays f closes over are read then) and
// batches a graph once per signature and traced graph (graft/graph_cache.h).
template <class F>
auto vmap(F f, AxisSpec in_axes = 0, AxisSpec out_axes = 0, std::string axis_name = "",
          std::source_location site = std::source_location::current()) {
  return [f, in_axes, out_axes, axis_name, site, cache = std::make_shared<detail::GraphCache>()](const auto&... args) {
    return detail::vmap_impl(f, in_axes, out_axes, axis_name, *cache, site, args...);
  };
}

}  // namespace graft
