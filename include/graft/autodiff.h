// Automatic differentiation: jvp (forward mode); vjp, grad and
// value_and_grad (reverse mode, by JVP + partial evaluation +
// transposition); custom rules and checkpointing. Jacobians, which batch
// with vmap, are in graft/jacobian.h.
#pragma once

#include <memory>
#include <source_location>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "graft/array.h"
#include "graft/errors.h"
#include "graft/graph.h"
#include "graft/graph_cache.h"
#include "graft/make_graph.h"
#include "graft/ops.h"
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

// The VJP graph of a traced scalar function (checked to be one) w.r.t. the
// leaves flagged in wrt. Its inputs: the leaves, the captured values, then
// the output cotangents; its outputs: f's outputs, then the gradients.
Graph grad_graph(const Graph& graph, size_t num_captured, const std::vector<Array>& leaves, const std::vector<bool>& wrt,
                 bool with_aux);
// Runs a grad_graph with cotangent 1 for the value (zeros for auxiliary
// outputs): returns every output, then the gradient of each flagged leaf.
std::vector<Array> run_grad_graph(const Graph& vjp, const std::vector<Array>& leaves, const std::vector<Array>& captured,
                                  size_t num_outputs);

// Whether argnums Is... name arguments of a call with N of them. Wrappers
// test it before anything else is instantiated, so a bad index is one clear
// compile-time message rather than errors deep inside <tuple>.
template <size_t N, size_t... Is>
inline constexpr bool argnums_ok = ((Is < N) && ...);
#define GRAFT_ARGNUMS_MESSAGE                                                                                \
  "graft: an argnum of grad/value_and_grad/jacfwd/jacrev/hessian<I...> is not less than the number of "     \
  "arguments the function is called with (argnums count from 0)"

// Whether argument I (of type T) of a derivative can be differentiated: it
// must hold an Array. A number or a struct not registered with GRAFT_PYTREE
// is a static value whose "gradient" would be the value handed back, so it
// is a compile-time error naming I and T (in the instantiation line above
// the message) and the fix.
template <size_t I, class T>
constexpr bool differentiable_argument() {
  static_assert(tree::holds_arrays<T>,
                "graft: grad/value_and_grad/jacfwd/jacrev/hessian differentiates argument I of type T (see the "
                "instantiation above), which holds no Array: a plain number, or a struct not registered with "
                "GRAFT_PYTREE, is a static value and would come back as its own gradient. Pass an Array "
                "(graft::scalar(x) for a number) or register the struct: GRAFT_PYTREE(Type, field1, field2, ...).");
  return tree::holds_arrays<T>;
}
// Every differentiated argument (Is..., or argument 0 when none) can be.
template <class ArgsTuple, size_t... Is>
constexpr bool differentiable_arguments() {
  if constexpr (std::tuple_size_v<ArgsTuple> == 0) return true;
  else if constexpr (sizeof...(Is) == 0) return differentiable_argument<0, std::tuple_element_t<0, ArgsTuple>>();
  else return (differentiable_argument<Is, std::tuple_element_t<Is, ArgsTuple>>() && ...);
}

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
  // The tuple type is spelled out: std::tuple{x} with x a pair or tuple would
  // deduce a copy of x rather than a one-element tuple holding it. Braced
  // initialisation runs take() left to right.
  return std::tuple<decltype(take(std::get<Is>(args)))...>{take(std::get<Is>(args))...};
}

// The cotangents of every leaf given cotangents of the outputs (zeros for
// integer leaves). The forward pass is recomputed inside.
std::vector<Array> vjp_call(const Graph& graph, const std::vector<Array>& captured, const std::vector<Array>& leaves,
                            const std::vector<Array>& out_cotangents);
std::vector<Array> run_graph(const Graph& graph, const std::vector<Array>& inputs);

template <class... Args>
std::vector<Array> all_leaves(const Args&... args) {
  std::vector<Array> out;
  (
      [&] {
        for (Array& a : tree::leaves(args)) out.push_back(a);
      }(),
      ...);
  return out;
}

// Flat cotangents regrouped as one tree per argument.
template <class Tuple>
auto regroup_all(const Tuple& args, const std::vector<Array>& flat) {
  size_t pos = 0;
  auto take = [&](const auto& like) {
    size_t n = tree::leaves(like).size();
    auto t = tree::unflatten(like, std::vector<Array>(flat.begin() + pos, flat.begin() + pos + n));
    pos += n;
    return t;
  };
  // Spelled-out tuple type and left-to-right braced initialisation, as in regroup.
  return std::apply([&](const auto&... a) { return std::tuple<decltype(take(a))...>{take(a)...}; }, args);
}


// linearize's forward pass: f's outputs now, the residuals its tangent needs,
// and the linear graph (residuals, tangents) -> output tangents.
struct LinearizedCall {
  std::vector<Array> outputs;
  std::vector<Array> residuals;
  Graph linear;
};
LinearizedCall linearize_call(const Graph& graph, const std::vector<Array>& captured, const std::vector<Array>& primals);
std::vector<Array> run_linear(const Graph& linear, const std::vector<Array>& residuals,
                              const std::vector<Array>& tangents);

// Emits a custom_vjp_call node (or runs it eagerly).
std::vector<Array> custom_vjp_bind(const std::vector<const Graph*>& graphs, const std::vector<std::vector<Array>>& captured,
                                   int64_t num_residuals, const std::vector<Array>& args);

// Emits a remat node (or runs it eagerly).
std::vector<Array> remat_bind(const Graph& body, const std::vector<Array>& captured, const std::vector<Array>& args);

// Emits a custom_jvp_call node (or runs it eagerly).
std::vector<Array> custom_jvp_bind(const Graph& call, const std::vector<Array>& call_captured, const Graph& rule,
                                   const std::vector<Array>& rule_captured, const std::vector<Array>& args);

}  // namespace detail

// checkpoint(f): the same function, but reverse mode recomputes its
// intermediate values in the backward pass instead of keeping them from the
// forward pass (rematerialisation): less memory for more compute.
template <class F>
auto checkpoint(F f) {
  return [f](const auto&... args) {
    auto call = detail::trace_function(f, args...);
    std::vector<Array> outs = detail::remat_bind(call.graph, call.captured, detail::all_leaves(args...));
    return tree::unflatten(call.out, outs);
  };
}

// custom_jvp(f, rule): f with its derivative given by the user.
// rule(std::tuple primals, std::tuple tangents) returns (f(primals...),
// tangent of the output), written with graft ops, linear in the tangents;
// reverse mode transposes it. Useful for numerically stable derivatives.
// f and rule may close over concrete arrays, not over traced ones.
template <class F, class R>
auto custom_jvp(F f, R rule) {
  return [f, rule](const auto&... args) {
    auto call = detail::trace_function(f, args...);
    auto rule_fn = [&rule](const auto& primals, const auto& tangents) { return rule(primals, tangents); };
    auto traced_rule = detail::trace_function(rule_fn, std::make_tuple(args...), std::make_tuple(args...));
    std::vector<Array> outs = detail::custom_jvp_bind(call.graph, call.captured, traced_rule.graph, traced_rule.captured,
                                                      detail::all_leaves(args...));
    return tree::unflatten(call.out, outs);
  };
}

// custom_vjp(f, fwd, bwd): f with its reverse-mode derivative given by the
// user. fwd(args...) returns (f(args...), residuals) with residuals a pytree
// of Arrays; bwd(residuals, output cotangent) returns a std::tuple with one
// cotangent per argument. Reverse mode (grad, vjp) calls bwd; forward mode
// (jvp) of such a function is an UnsupportedError, as in JAX.
template <class F, class Fwd, class Bwd>
auto custom_vjp(F f, Fwd fwd, Bwd bwd) {
  return [f, fwd, bwd](const auto&... args) {
    auto call = detail::trace_function(f, args...);
    auto fw = detail::trace_function(fwd, args...);
    auto bw = detail::trace_function(bwd, fw.out.second, call.out);
    int64_t num_residuals = static_cast<int64_t>(tree::leaves(fw.out.second).size());
    std::vector<Array> outs = detail::custom_vjp_bind({&call.graph, &fw.graph, &bw.graph},
                                                      {call.captured, fw.captured, bw.captured}, num_residuals,
                                                      detail::all_leaves(args...));
    return tree::unflatten(call.out, outs);
  };
}

// vjp(f, args...) -> (f(args...), vjp_fn): vjp_fn(cotangent) returns a
// std::tuple with the cotangent of every argument (zeros for integers).
// Each vjp_fn call re-runs the forward pass; saving residuals comes with jit.
template <class F, class... Args>
auto vjp(F f, const Args&... args) {
  auto traced = detail::trace_function(f, args...);
  std::vector<Array> leaves = detail::all_leaves(args...);
  std::vector<Array> inputs = leaves;
  inputs.insert(inputs.end(), traced.captured.begin(), traced.captured.end());
  auto out = tree::unflatten(traced.out, detail::run_graph(traced.graph, inputs));
  auto fn = [graph = traced.graph, captured = traced.captured, leaves, args_like = std::make_tuple(args...)](
                const auto& cotangent) {
    return detail::regroup_all(args_like, detail::vjp_call(graph, captured, leaves, tree::leaves(cotangent)));
  };
  return std::make_pair(out, fn);
}


namespace detail {

// value_and_grad with or without auxiliary outputs: the loss (and aux) as f
// returned them, then the gradients of the arguments Is (argument 0 if none).
// f is traced at every call, so arrays it closes over are read now; the VJP
// graph is reused from `cache` when this signature traced to the same graph.
template <bool WithAux, size_t... Is, class F, class... Args>
auto value_and_grad_impl(F& f, GraphCache& cache, const std::source_location& site, const Args&... args) {
  using Out = std::decay_t<decltype(f(args...))>;
  struct Entry {
    Graph vjp;
    Out out_like;  // the result tree's structure (its leaves are dead tracers)
  };
  constexpr bool default_arg = sizeof...(Is) == 0;
  auto [leaves, wrt] = default_arg ? leaves_with_flags<0>(args...) : leaves_with_flags<Is...>(args...);
  std::string key = signature_key(WithAux ? "value_and_grad+aux" : "value_and_grad", args...);
  auto traced = trace_function(f, args...);
  std::vector<Array> captured = traced.captured;
  std::shared_ptr<const Entry> entry;
  if (!key.empty()) entry = std::static_pointer_cast<const Entry>(cache.find(key, traced.graph));
  if (!entry) {
    cache.count_trace();
    Graph vjp;
    try {
      vjp = grad_graph(traced.graph, captured.size(), leaves, wrt, WithAux);
    } catch (const Error&) {
      rethrow_with_site(WithAux ? "value_and_grad(has_aux)" : "grad", site);
    }
    entry = std::make_shared<const Entry>(Entry{std::move(vjp), traced.out});
    if (!key.empty()) cache.insert(key, traced.graph, entry);
  }
  size_t n_out = tree::leaves(entry->out_like).size();
  std::vector<Array> res = run_grad_graph(entry->vjp, leaves, captured, n_out);
  auto value = tree::unflatten(entry->out_like, std::vector<Array>(res.begin(), res.begin() + n_out));
  std::vector<Array> grads(res.begin() + n_out, res.end());
  auto packed = std::forward_as_tuple(args...);
  if constexpr (default_arg) {
    return std::make_pair(value, std::get<0>(regroup<0>(packed, grads)));
  } else if constexpr (sizeof...(Is) == 1) {
    return std::make_pair(value, std::get<0>(regroup<Is...>(packed, grads)));
  } else {
    return std::make_pair(value, regroup<Is...>(packed, grads));
  }
}

}  // namespace detail

// value_and_grad<I...>(f)(args...): (f(args...), gradients w.r.t. arguments
// I...). f must return a scalar float Array. With one index the gradient
// has that argument's structure; with several it is a std::tuple of them.
// The wrapper traces f at every call, so arrays f closes over are read then
// (as jax.grad does), and builds the VJP graph once per abstract signature
// and traced graph (see graft/graph_cache.h); copies share what it cached.
template <size_t... Is, class F>
auto value_and_grad(F f, std::source_location site = std::source_location::current()) {
  return [f, site, cache = std::make_shared<detail::GraphCache>()](const auto&... args) {
    if constexpr (!detail::argnums_ok<sizeof...(args), Is...>)
      static_assert(detail::argnums_ok<sizeof...(args), Is...>, GRAFT_ARGNUMS_MESSAGE);
    else if constexpr (detail::differentiable_arguments<std::tuple<std::decay_t<decltype(args)>...>, Is...>())
      return detail::value_and_grad_impl<false, Is...>(f, *cache, site, args...);
  };
}

// grad<I...>(f)(args...): the gradient part of value_and_grad.
template <size_t... Is, class F>
auto grad(F f, std::source_location site = std::source_location::current()) {
  return [vg = value_and_grad<Is...>(f, site)](const auto&... args) {
    if constexpr (!std::is_void_v<decltype(vg(args...))>) return vg(args...).second;  // void: a static_assert fired
  };
}

// The has_aux tag: f returns std::pair<Array loss, Aux> and only the loss is
// differentiated. value_and_grad(f, has_aux) gives ((loss, aux), grads);
// grad(f, has_aux) gives (grads, aux), as JAX's.
struct HasAux {};
inline constexpr HasAux has_aux{};

template <size_t... Is, class F>
auto value_and_grad(F f, HasAux, std::source_location site = std::source_location::current()) {
  return [f, site, cache = std::make_shared<detail::GraphCache>()](const auto&... args) {
    if constexpr (!detail::argnums_ok<sizeof...(args), Is...>)
      static_assert(detail::argnums_ok<sizeof...(args), Is...>, GRAFT_ARGNUMS_MESSAGE);
    else if constexpr (detail::differentiable_arguments<std::tuple<std::decay_t<decltype(args)>...>, Is...>())
      return detail::value_and_grad_impl<true, Is...>(f, *cache, site, args...);
  };
}

template <size_t... Is, class F>
auto grad(F f, HasAux, std::source_location site = std::source_location::current()) {
  return [vg = value_and_grad<Is...>(f, has_aux, site)](const auto&... args) {
    auto [value, grads] = vg(args...);
    return std::make_pair(grads, value.second);
  };
}

// linearize(f, args...) -> (f(args...), jvp_fn): jvp_fn(tangents...), with
// tangents shaped like args, gives the output tangent. The forward pass runs
// once; each jvp_fn call runs only the linear part, from residuals saved by
// that pass (jax.linearize). Every Array leaf of args must be float.
template <class F, class... Args>
auto linearize(F f, const Args&... args) {
  auto traced = detail::trace_function(f, args...);
  detail::LinearizedCall lin = detail::linearize_call(traced.graph, traced.captured, detail::all_leaves(args...));
  auto value = tree::unflatten(traced.out, lin.outputs);
  auto fn = [linear = lin.linear, residuals = lin.residuals, out_like = traced.out](const auto&... tangents) {
    return tree::unflatten(out_like, detail::run_linear(linear, residuals, detail::all_leaves(tangents...)));
  };
  return std::make_pair(value, fn);
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
