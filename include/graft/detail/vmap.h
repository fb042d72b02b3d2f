// The machinery behind graft/vmap.h: in_axes and out_axes resolution, batching
// a traced function and moving its axes.
// Not part of the API: names here may change.
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

namespace detail {

// The batch axis of every leaf (-1: not mapped), spec matched against the
// tree's shape, negative axes normalised against each leaf's mapped rank
// (ranks[i] = rank of leaf i including the mapped axis). `what` names the
// specification in errors ("in_axes", "out_axes"); `top` names the tree's
// children ("argument", "output").
std::vector<int64_t> leaf_axes(const AxisSpec& spec, const tree::TreeShape& shape, const std::vector<int64_t>& ranks,
                               const char* what, const char* top);
// The size of the mapped axis, checked to be the same for every mapped leaf.
int64_t mapped_axis_size(const std::vector<Array>& leaves, const std::vector<int64_t>& dims,
                         const tree::TreeShape& shape);
// A traced input for one example of a leaf mapped at dim (the leaf itself if dim < 0).
Array example_input(TraceSession& session, const Array& leaf, int64_t dim);
// The batched graph of a traced function; its inputs are the leaves, the
// Refs it uses (not mapped), then the captured values (not mapped); its
// outputs placed at out_dims, then the Refs' final values, which must not
// vary along the mapped axis (an UnsupportedError if one does).
Graph vmap_transform(const Graph& traced, size_t num_captured, const std::vector<int64_t>& in_dims,
                     const std::vector<int64_t>& out_dims, int64_t axis_size, const std::string& axis_name,
                     size_t num_refs = 0);

template <class... Args>
tree::TreeShape arguments_shape(const Args&... args) {
  tree::TreeShape top;
  (tree::detail::add_child(args, top), ...);
  return top;
}

// The arguments' leaves, the axis each is mapped along (-1: none) and the
// mapped axis's size, checked against in_axes.
struct MappedLeaves {
  std::vector<Array> leaves;
  std::vector<int64_t> dims;
  int64_t size = 0;
};

template <class... Args>
MappedLeaves map_leaves(const AxisSpec& in_axes, const Args&... args) {
  std::vector<Array> leaves = all_leaves(args...);
  tree::TreeShape shape = arguments_shape(args...);
  std::vector<int64_t> ranks;
  for (const Array& a : leaves) ranks.push_back(a.ndim());
  std::vector<int64_t> dims = leaf_axes(in_axes, shape, ranks, "in_axes", "argument");
  const int64_t size = mapped_axis_size(leaves, dims, shape);
  return {std::move(leaves), std::move(dims), size};
}

// f traced on one example of its arguments: each leaf mapped at dims[i]
// without that axis (an unmapped leaf as it is), with axis `axis_name` of
// `size` bound for collectives. Gives the graph, f's result (for its tree
// structure), the values of enclosing traces f captured and the Refs bound.
template <class F, class... Args>
auto trace_example(F& f, const std::vector<Array>& leaves, const std::vector<int64_t>& dims,
                   const std::string& axis_name, int64_t size, const RefUse& refs, const Args&... args) {
  using Out = std::decay_t<decltype(f(args...))>;
  TraceSession session;
  if (refs.carry) session.carry_refs();
  std::vector<Array> examples;
  for (size_t i = 0; i < leaves.size(); ++i) examples.push_back(example_input(session, leaves[i], dims[i]));
  std::tuple<Args...> traced_args = regroup_all(std::forward_as_tuple(args...), examples);
  session.bind_refs(refs.bound);
  std::optional<Out> out;
  {
    AxisFrame frame(axis_name, size);
    out.emplace(std::apply(f, traced_args));
  }
  session.refuse_ref_arguments();
  std::vector<Array> outs = tree::leaves(*out);
  for (Array& a : session.bound_finals()) outs.push_back(a);
  if (refs.touched) *refs.touched = session.touched_refs();
  Graph g = session.finish(outs);
  return TracedFunction<Out>{std::move(g), session.captured(), std::move(*out), refs.bound};
}

template <class F, class... Args>
auto vmap_impl(F& f, const AxisSpec& in_axes, const AxisSpec& out_axes, const std::string& axis_name, GraphCache& cache,
               const std::source_location& site, const Args&... args) {
  using Out = std::decay_t<decltype(f(args...))>;
  using Entry = TransformedEntry<Out>;
  // Named members, not a structured binding: lambdas below use them, and
  // clang refuses to capture a structured binding under -fopenmp.
  MappedLeaves mapped = [&] {
    try {
      return map_leaves(in_axes, args...);
    } catch (const Error&) {
      rethrow_with_site("vmap", site);
    }
  }();
  std::vector<Array>& leaves = mapped.leaves;
  const std::vector<int64_t>& dims = mapped.dims;
  const int64_t size = mapped.size;

  // Traced at every call, so arrays f closes over are read now; the batched
  // graph is reused when this signature traced to the same graph.
  // Refs of enclosing code that f uses are unmapped inputs (found by a first trace, bound in a second).
  std::string key = signature_key("vmap", args...);
  auto traced =
      trace_finding_refs([&](const RefUse& refs) { return trace_example(f, leaves, dims, axis_name, size, refs, args...); });
  const size_t nr = traced.refs.size();
  std::vector<Array> captured = traced.captured;
  std::shared_ptr<const Entry> entry;
  if (!key.empty()) entry = std::static_pointer_cast<const Entry>(cache.find(key, traced.graph));
  if (!entry) {
    cache.count_trace();
    std::vector<int64_t> out_ranks;
    for (const Array& a : tree::leaves(traced.out)) out_ranks.push_back(a.ndim() + 1);
    Graph batched;
    try {
      std::vector<int64_t> out_dims = leaf_axes(out_axes, tree::shape(traced.out), out_ranks, "out_axes", "output");
      std::vector<int64_t> in_dims = dims;
      in_dims.resize(dims.size() + nr, -1);
      batched = vmap_transform(traced.graph, captured.size(), in_dims, out_dims, size, axis_name, nr);
    } catch (const Error&) {
      rethrow_with_site("vmap", site);
    }
    entry = std::make_shared<const Entry>(Entry{std::move(batched), traced.out});
    if (!key.empty()) cache.insert(key, traced.graph, entry);
  }
  std::vector<Array> inputs = leaves;
  for (Array& a : ref_initials(traced.refs)) inputs.push_back(a);
  inputs.insert(inputs.end(), captured.begin(), captured.end());
  std::vector<Array> outs = run_graph(entry->graph, inputs);
  write_back_refs(traced.refs, std::vector<Array>(outs.end() - static_cast<std::ptrdiff_t>(nr), outs.end()));
  outs.resize(outs.size() - nr);
  return tree::unflatten(entry->out_like, outs);
}

}  // namespace detail

}  // namespace graft
