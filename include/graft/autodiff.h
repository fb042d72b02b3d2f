// Automatic differentiation. jvp (forward mode) is here; vjp, grad and the
// rest follow with the autodiff issue.
#pragma once

#include <tuple>
#include <utility>
#include <vector>

#include "graft/array.h"
#include "graft/graph.h"
#include "graft/make_graph.h"
#include "graft/tree.h"

namespace graft {

namespace detail {

template <class Out>
struct TracedFunction {
  Graph graph;                  // inputs: the arguments' leaves, then captured values
  std::vector<Array> captured;  // values of enclosing traces the function used
  Out out;                      // the result tree (its leaves are dead tracers: structure only)
};

// Traces f on abstract copies of args.
template <class F, class... Args>
auto trace_function(F& f, const Args&... args) {
  using Out = std::decay_t<decltype(f(args...))>;
  TraceSession session;
  std::tuple<Args...> traced{abstract_like(session, args)...};
  Out out = std::apply(f, traced);
  Graph g = session.finish(tree::leaves(out));
  return TracedFunction<Out>{g, session.captured(), out};
}

// Runs the JVP of a traced function: returns its outputs, then their tangents.
std::vector<Array> jvp_call(const Graph& graph, const std::vector<Array>& captured, const std::vector<Array>& primals,
                            const std::vector<Array>& tangents);

}  // namespace detail

// (f(primals...), the directional derivative of f at primals along tangents).
// primals and tangents are tuples of pytrees of one structure.
template <class F, class... P, class... T>
auto jvp(F f, const std::tuple<P...>& primals, const std::tuple<T...>& tangents) {
  auto traced = std::apply([&](const auto&... p) { return detail::trace_function(f, p...); }, primals);
  std::vector<Array> out = detail::jvp_call(traced.graph, traced.captured, tree::leaves(primals), tree::leaves(tangents));
  size_t n = out.size() / 2;
  auto value = tree::unflatten(traced.out, std::vector<Array>(out.begin(), out.begin() + n));
  auto tangent = tree::unflatten(traced.out, std::vector<Array>(out.begin() + n, out.end()));
  return std::make_pair(value, tangent);
}

}  // namespace graft
