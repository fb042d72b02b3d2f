// make_graph(f)(args...): the graph f builds on abstract arguments, like
// jax.make_jaxpr; evaluate(graph, inputs) runs any graph.
#pragma once

#include <memory>
#include <tuple>
#include <vector>

#include "graft/array.h"
#include "graft/graph.h"
#include "graft/tree.h"

namespace graft {

std::vector<Array> evaluate(const Graph& graph, const std::vector<Array>& inputs);

namespace detail {

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

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// g without the nodes its outputs do not need (side effects kept): what a
// transform traced and then left unused, such as the forward pass's loss
// under grad.
Graph drop_dead_nodes(const Graph& g);

template <class T>
T abstract_like(TraceSession& session, const T& tree) {
  std::vector<Array> leaves = tree::leaves(tree);
  for (Array& a : leaves) a = session.input_like(a);
  return tree::unflatten(tree, leaves);
}

}  // namespace detail

template <class F>
auto make_graph(F f) {
  return [f](const auto&... args) -> Graph {
    detail::TraceSession session;
    // Braced initialisation runs left to right, so inputs are numbered in argument order.
    std::tuple<std::decay_t<decltype(args)>...> traced{detail::abstract_like(session, args)...};
    auto out = std::apply(f, traced);
    return detail::drop_dead_nodes(session.finish(tree::leaves(out)));
  };
}

}  // namespace graft
