// Automatic differentiation: jvp (forward mode); vjp, grad and
// value_and_grad (reverse mode, by JVP + partial evaluation +
// transposition); custom rules and checkpointing. Jacobians, which batch
// with vmap, are in graft/jacobian.h.
#pragma once

#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "graft/array.h"
#include "graft/detail/source_location.h"
#include "graft/errors.h"
#include "graft/graph.h"
#include "graft/graph_cache.h"
#include "graft/make_graph.h"
#include "graft/ops.h"
#include "graft/tree.h"

#include "graft/detail/autodiff.h"

namespace graft {

namespace checkpoint_policies {

// Which values computed inside a checkpointed function reverse mode keeps
// from the forward pass; it recomputes the rest (jax.checkpoint_policies).
// Made by the constants and factories below.
class Policy {
 public:
  explicit Policy(std::string spec) : spec_(std::move(spec)) {}
  const std::string& spec() const { return spec_; }  // as graph text and JSON spell it

 private:
  std::string spec_;
};

extern const Policy everything_saveable;               // keeps everything: nothing is recomputed
extern const Policy nothing_saveable;                  // keeps nothing: checkpoint(f)'s behaviour
extern const Policy dots_saveable;                     // keeps dot_general results (matmul, einsum)
extern const Policy dots_with_no_batch_dims_saveable;  // keeps those without batch axes
// Keeps the values named (checkpoint_name) with one of `names`.
Policy save_only_these_names(const std::vector<std::string>& names);
// Keeps everything but the values named with one of `names`.
Policy save_anything_except_these_names(const std::vector<std::string>& names);

}  // namespace checkpoint_policies

// checkpoint(f): the same function, but reverse mode recomputes its
// intermediate values in the backward pass instead of keeping them from the
// forward pass (rematerialisation): less memory for more compute.
template <class F>
auto checkpoint(F f);

// checkpoint(f, policy): reverse mode keeps what the policy saves and
// recomputes the rest. Under jit the forward pass fuses with what surrounds
// it, so checkpointing never costs memory over not checkpointing.
template <class F>
auto checkpoint(F f, checkpoint_policies::Policy policy);

// x, named for save_only_these_names and save_anything_except_these_names
// (jax.ad_checkpoint.checkpoint_name). jit removes the name.
Array checkpoint_name(ArrayAt x, const std::string& name);

template <class F>
auto checkpoint(F f, checkpoint_policies::Policy policy) {
  return [f, policy](const auto&... args) {
    auto call = detail::trace_function(f, args...);
    std::vector<Array> outs = detail::remat_bind(call.graph, call.captured, detail::all_leaves(args...), policy.spec());
    return tree::unflatten(call.out, outs);
  };
}

template <class F>
auto checkpoint(F f) {
  return checkpoint(std::move(f), checkpoint_policies::nothing_saveable);
}

// custom_jvp(f, rule): f with its derivative given by the user.
// rule(std::tuple primals, std::tuple tangents) returns (f(primals...),
// tangent of the output), written with graft ops, linear in the tangents;
// reverse mode transposes it. Useful for numerically stable derivatives.
// f and rule may close over arrays an enclosing transform traces; the
// derivative with respect to those is f's own, differentiated as usual (the
// rule speaks for the arguments only; JAX refuses this case).
template <class F, class R>
auto custom_jvp(F f, R rule) {
  return [f, rule](const auto&... args) {
    if (auto out = detail::call_if_concrete(f, args...)) return *out;
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
// (jvp) of such a function is an UnsupportedError, as in JAX. f, fwd and
// bwd may close over arrays an enclosing transform traces; the cotangent of
// those is f's own, differentiated as usual (JAX refuses this case).
template <class F, class Fwd, class Bwd>
auto custom_vjp(F f, Fwd fwd, Bwd bwd) {
  return [f, fwd, bwd](const auto&... args) {
    if (auto out = detail::call_if_concrete(f, args...)) return *out;
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
      return detail::value_and_grad_impl<false, false, Is...>(f, *cache, site, args...);
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
      return detail::value_and_grad_impl<true, false, Is...>(f, *cache, site, args...);
  };
}

template <size_t... Is, class F>
auto grad(F f, HasAux, std::source_location site = std::source_location::current()) {
  return [vg = value_and_grad<Is...>(f, has_aux, site)](const auto&... args) {
    auto [value, grads] = vg(args...);
    return std::make_pair(grads, value.second);
  };
}

// The holomorphic tag: f maps complex arguments to a complex scalar and is
// complex-differentiable; grad(f, holomorphic) gives df/dz (JAX's
// holomorphic=True). Without it, grad takes real-valued functions only.
struct Holomorphic {};
inline constexpr Holomorphic holomorphic{};

template <size_t... Is, class F>
auto value_and_grad(F f, Holomorphic, std::source_location site = std::source_location::current()) {
  return [f, site, cache = std::make_shared<detail::GraphCache>()](const auto&... args) {
    if constexpr (!detail::argnums_ok<sizeof...(args), Is...>)
      static_assert(detail::argnums_ok<sizeof...(args), Is...>, GRAFT_ARGNUMS_MESSAGE);
    else if constexpr (detail::differentiable_arguments<std::tuple<std::decay_t<decltype(args)>...>, Is...>())
      return detail::value_and_grad_impl<false, true, Is...>(f, *cache, site, args...);
  };
}

template <size_t... Is, class F>
auto grad(F f, Holomorphic, std::source_location site = std::source_location::current()) {
  return [vg = value_and_grad<Is...>(f, holomorphic, site)](const auto&... args) {
    if constexpr (!std::is_void_v<decltype(vg(args...))>) return vg(args...).second;
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
