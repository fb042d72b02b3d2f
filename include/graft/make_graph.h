// make_graph(f)(args...): the graph f builds on abstract arguments, like
// jax.make_jaxpr; evaluate(graph, inputs) runs any graph.
#pragma once

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "graft/array.h"
#include "graft/graph.h"
#include "graft/tree.h"

namespace graft {

std::vector<Array> evaluate(const Graph& graph, const std::vector<Array>& inputs);

namespace detail {

struct RefState;

// A trace that lives while a transform calls the user's function. Inputs
// come first; values the function captures from enclosing traces become
// further (implicit) inputs after them.
class TraceSession {
 public:
  TraceSession();
  ~TraceSession();
  TraceSession(const TraceSession&) = delete;
  TraceSession& operator=(const TraceSession&) = delete;

  Array input_like(const Array& like);  // a traced input of like's shape and dtype
  Array input_of(const Shape& shape, DType dtype);
  Graph finish(const std::vector<Array>& outputs);
  // Values of enclosing traces the function captured, in the order of the
  // graph's implicit inputs (after the explicit ones). Call after finish().
  std::vector<Array> captured() const;

  // Refs passed as arguments (graft/ref.h): the traced function saw one Ref
  // per such argument, made when its inputs were. Only jit takes them:
  // refuse_ref_arguments throws for every other transform.
  void refuse_ref_arguments() const;
  std::vector<Array> ref_finals() const;            // each such Ref's value when the function returned
  std::vector<size_t> ref_input_positions() const;  // the graph input each one started from
  // Internal: records one (from detail::ref_alias).
  void add_ref_argument(std::shared_ptr<RefState> alias);

  // Refs of enclosing code inside a loop body (scan, fori_loop, while_loop):
  // a body traced with carry_refs() may read and write them. The body is
  // traced once to find the Refs it touches (touched_refs), then again with
  // each bound to an input (bind_refs, after the arguments' inputs), so the
  // loop carries them; bound_finals are their values at the end.
  void carry_refs();
  bool carries_refs() const;
  void note_touched(const std::shared_ptr<RefState>& state);
  std::vector<std::shared_ptr<RefState>> touched_refs() const;
  void bind_refs(const std::vector<std::shared_ptr<RefState>>& states);
  std::vector<Array> bound_finals() const;
  std::vector<size_t> bound_input_positions() const;  // the graph input of each bound Ref
  const void* trace_id() const;                       // the trace this session records into

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The graph make_graph returns: the traced one without the nodes its outputs
// do not need (side effects kept: what a transform traced and then left
// unused, such as the forward pass's loss under grad), its inputs and
// outputs named (inputs past the names given, which the function captured,
// are named "captured[i]").
Graph exported_graph(const Graph& traced, std::vector<std::string> input_names,
                     std::vector<std::string> output_names);

template <class T>
T abstract_like(TraceSession& session, const T& tree) {
  std::vector<Array> leaves = tree::leaves(tree);
  for (Array& a : leaves) a = session.input_like(a);
  return tree::unflatten(tree, leaves);
}

}  // namespace detail

// The graph's inputs and outputs are named by their pytree paths
// (tree::paths): argument k is argnames[k] ("arg0", "arg1", ... when not
// given), so a struct's field reads "params.w1"; outputs start at "out".
template <class F>
auto make_graph(F f, std::vector<std::string> argnames = {}) {
  return [f, argnames](const auto&... args) -> Graph {
    detail::TraceSession session;
    // Braced initialisation runs left to right, so inputs are numbered in argument order.
    std::tuple<std::decay_t<decltype(args)>...> traced{detail::abstract_like(session, args)...};
    std::vector<std::string> input_names;
    size_t k = 0;
    auto name_arg = [&](const auto& a) {
      tree::detail::add_paths(a, k < argnames.size() ? argnames[k] : "arg" + std::to_string(k), input_names);
      ++k;
    };
    (name_arg(args), ...);
    auto out = std::apply(f, traced);
    session.refuse_ref_arguments();
    return detail::exported_graph(session.finish(tree::leaves(out)), std::move(input_names), tree::paths(out, "out"));
  };
}

}  // namespace graft
