// Automatic differentiation: jvp (forward mode), grad and value_and_grad
// (reverse mode, by JVP + partial evaluation + transposition). vjp,
// jacobians, custom rules and checkpointing follow with the autodiff issue.
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

// Runs the VJP of a traced scalar function with cotangent 1: returns the
// value, then the gradient of each leaf flagged in wrt.
std::vector<Array> grad_call(const Graph& graph, const std::vector<Array>& captured, const std::vector<Array>& leaves,
                             const std::vector<bool>& wrt);

// Leaves of every argument, with those of the arguments in Is flagged.
template <size_t... Is, class... Args>
std::pair<std::vector<Array>, std::vector<bool>> leaves_with_flags(const Args&... args) {
  std::vector<Array> all;
  std::vector<bool> flags;
  size_t index = 0;
  auto add = [&](const auto& a) {
    bool wanted = ((index == Is) || ...);
    for (Array& leaf : tree::leaves(a)) {
      all.push_back(leaf);
      flags.push_back(wanted);
    }
    ++index;
  };
  (add(args), ...);
  return {all, flags};
}

// The gradients (flattened, in argument order) regrouped as the wanted arguments' trees.
template <size_t... Is, class Tuple>
auto regroup(const Tuple& args, const std::vector<Array>& grads) {
  size_t pos = 0;
  auto take = [&](const auto& like) {
    size_t n = tree::leaves(like).size();
    auto t = tree::unflatten(like, std::vector<Array>(grads.begin() + pos, grads.begin() + pos + n));
    pos += n;
    return t;
  };
  return std::tuple{take(std::get<Is>(args))...};
}

}  // namespace detail

// value_and_grad<I...>(f)(args...): (f(args...), gradients w.r.t. arguments
// I...). f must return a scalar float Array. With one index the gradient
// has that argument's structure; with several it is a std::tuple of them.
template <size_t... Is, class F>
auto value_and_grad(F f) {
  return [f](const auto&... args) {
    auto traced = detail::trace_function(f, args...);
    constexpr bool default_arg = sizeof...(Is) == 0;
    auto [leaves, wrt] = default_arg ? detail::leaves_with_flags<0>(args...) : detail::leaves_with_flags<Is...>(args...);
    std::vector<Array> res = detail::grad_call(traced.graph, traced.captured, leaves, wrt);
    Array value = res[0];
    std::vector<Array> grads(res.begin() + 1, res.end());
    auto packed = std::forward_as_tuple(args...);
    if constexpr (default_arg) {
      return std::make_pair(value, std::get<0>(detail::regroup<0>(packed, grads)));
    } else if constexpr (sizeof...(Is) == 1) {
      return std::make_pair(value, std::get<0>(detail::regroup<Is...>(packed, grads)));
    } else {
      return std::make_pair(value, detail::regroup<Is...>(packed, grads));
    }
  };
}

// grad<I...>(f)(args...): the gradient part of value_and_grad.
template <size_t... Is, class F>
auto grad(F f) {
  return [f](const auto&... args) { return value_and_grad<Is...>(f)(args...).second; };
}

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
