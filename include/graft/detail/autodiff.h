// The machinery behind graft/autodiff.h: tracing a function, the gradient
// graphs, argnums checks and regrouping, and the calls behind custom rules and
// checkpointing.
// Not part of the API: names here may change.
#pragma once

#include <memory>
#include <optional>
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

namespace graft {

namespace detail {

template <class Out>
struct TracedFunction {
  Graph graph;                  // inputs: the arguments' leaves, [carried Refs,] then captured values
  std::vector<Array> captured;  // values of enclosing traces the function used
  Out out;                      // the result tree (its leaves are dead tracers: structure only)
  // Traced with trace_using_refs: enclosing Refs it uses, each an input
  // after the arguments' leaves and an output after the result's.
  std::vector<std::shared_ptr<RefState>> refs;
};

// What value_and_grad and vmap cache per signature: the transformed graph
// and the result's structure (its leaves are dead tracers). At namespace
// scope, so wrappers of different functions with one result type share its
// instantiations (a local struct would be a new type, with its own
// shared_ptr machinery, per function: test files compiled that much slower).
template <class Out>
struct TransformedEntry {
  Graph graph;
  Out out_like;
};

// How a traced function may use Refs of enclosing code: not at all, or
// (carry) with those in `bound` bound to inputs after the arguments' leaves
// and their final values outputs after the result's; Refs used but not
// bound are reported in *touched.
struct RefUse {
  bool carry = false;
  std::vector<std::shared_ptr<RefState>> bound;
  std::vector<std::shared_ptr<RefState>>* touched = nullptr;
};

// trace(RefUse) once to find the Refs of enclosing code the function uses
// and, when there are some, again with them bound.
template <class Trace>
auto trace_finding_refs(const Trace& trace) {
  std::vector<std::shared_ptr<RefState>> touched;
  auto first = trace(RefUse{true, {}, &touched});
  if (touched.empty()) return first;
  return trace(RefUse{true, touched, nullptr});
}

// Traces f on abstract copies of args, binding the Refs `bound` to inputs
// when f may use Refs of enclosing code (carry): the Refs it used but were
// not bound come back too.
template <class F, class... Args>
auto trace_once(bool carry, const std::vector<std::shared_ptr<RefState>>& bound,
                std::vector<std::shared_ptr<RefState>>* touched, F& f, const Args&... args) {
  using Out = std::decay_t<decltype(f(args...))>;
  TraceSession session;
  if (carry) session.carry_refs();
  std::tuple<Args...> traced{abstract_like(session, args)...};
  session.bind_refs(bound);
  Out out = std::apply(f, traced);
  session.refuse_ref_arguments();
  std::vector<Array> outs = tree::leaves(out);
  for (Array& a : session.bound_finals()) outs.push_back(a);
  if (touched) *touched = session.touched_refs();
  Graph g = session.finish(outs);
  return TracedFunction<Out>{g, session.captured(), out, bound};
}

// Traces f on abstract copies of args.
template <class F, class... Args>
auto trace_function(F& f, const Args&... args) {
  return trace_once(false, {}, nullptr, f, args...);
}

// Traces a function that may read and write Refs of enclosing code (a loop
// body, or the function of grad or vmap): each becomes an extra input and
// output (TracedFunction::refs). A function that uses some is traced twice:
// once to find them, once with them bound.
template <class F, class... Args>
auto trace_using_refs(F& f, const Args&... args) {
  return trace_finding_refs([&](const RefUse& refs) { return trace_once(true, refs.bound, refs.touched, f, args...); });
}

// Refs bound by trace_using_refs: each one's value as the code running now
// sees it (the extra inputs), and the final values written back after the call.
std::vector<Array> ref_initials(const std::vector<std::shared_ptr<RefState>>& refs);
void write_back_refs(const std::vector<std::shared_ptr<RefState>>& refs, const std::vector<Array>& finals);

// Runs the JVP of a traced function: returns its outputs, then their tangents.
std::vector<Array> jvp_call(const Graph& graph, const std::vector<Array>& captured, const std::vector<Array>& primals,
                            const std::vector<Array>& tangents);

// The VJP graph of a traced scalar function (checked to be one) w.r.t. the
// leaves flagged in wrt. Its inputs: the leaves, the captured values, then
// the output cotangents; its outputs: f's outputs, then the gradients.
// With `holomorphic`, the value and the flagged leaves must be complex (JAX's
// holomorphic=True). The last num_ref_outputs outputs are the final values
// of Refs f used (trace_using_refs), carried along like auxiliary outputs.
Graph grad_graph(const Graph& graph, size_t num_captured, const std::vector<Array>& leaves,
                 const std::vector<bool>& wrt, bool with_aux, bool holomorphic = false, size_t num_ref_outputs = 0);
// Runs a grad_graph with cotangent 1 for the value (zeros for auxiliary
// outputs): returns every output, then the gradient of each flagged leaf.
std::vector<Array> run_grad_graph(const Graph& vjp, const std::vector<Array>& leaves,
                                  const std::vector<Array>& captured, size_t num_outputs);

// Whether argnums Is... name arguments of a call with N of them. Wrappers
// test it before anything else is instantiated, so a bad index is one clear
// compile-time message rather than errors deep inside <tuple>.
template <size_t N, size_t... Is>
inline constexpr bool argnums_ok = ((Is < N) && ...);
#define GRAFT_ARGNUMS_MESSAGE                                                                           \
  "graft: an argnum of grad/value_and_grad/jacfwd/jacrev/hessian<I...> is not less than the number of " \
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
  if constexpr (std::tuple_size_v<ArgsTuple> == 0)
    return true;
  else if constexpr (sizeof...(Is) == 0)
    return differentiable_argument<0, std::tuple_element_t<0, ArgsTuple>>();
  else
    return (differentiable_argument<Is, std::tuple_element_t<Is, ArgsTuple>>() && ...);
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

// Whether any of the arrays is a value of a trace (an enclosing transform's).
bool any_traced(const std::vector<Array>& arrays);

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

// f(args...) run as it is where no argument is traced and neither is its
// result (no enclosing transform can ask for a custom rule then), else
// std::nullopt. Spares the eager calls of custom_jvp, custom_vjp and
// checkpoint the tracing of their rules.
template <class F, class... Args>
auto call_if_concrete(F& f, const Args&... args) -> std::optional<std::decay_t<decltype(f(args...))>> {
  if (any_traced(all_leaves(args...))) return std::nullopt;
  auto out = f(args...);
  if (any_traced(tree::leaves(out))) return std::nullopt;  // f closes over a traced value: the traced path says so
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
LinearizedCall linearize_call(const Graph& graph, const std::vector<Array>& captured,
                              const std::vector<Array>& primals);
std::vector<Array> run_linear(const Graph& linear, const std::vector<Array>& residuals,
                              const std::vector<Array>& tangents);

// Emits a custom_vjp_call node (or runs it eagerly).
std::vector<Array> custom_vjp_bind(const std::vector<const Graph*>& graphs,
                                   const std::vector<std::vector<Array>>& captured, int64_t num_residuals,
                                   const std::vector<Array>& args);

// Emits a remat node with the policy spelled `policy` (or runs it eagerly).
std::vector<Array> remat_bind(const Graph& body, const std::vector<Array>& captured, const std::vector<Array>& args,
                              const std::string& policy);

// Emits a custom_jvp_call node (or runs it eagerly).
std::vector<Array> custom_jvp_bind(const Graph& call, const std::vector<Array>& call_captured, const Graph& rule,
                                   const std::vector<Array>& rule_captured, const std::vector<Array>& args);

}  // namespace detail

namespace detail {

// value_and_grad with or without auxiliary outputs: the loss (and aux) as f
// returned them, then the gradients of the arguments Is (argument 0 if none).
// f is traced at every call, so arrays it closes over are read now; the VJP
// graph is reused from `cache` when this signature traced to the same graph.
template <bool WithAux, bool Holomorphic, size_t... Is, class F, class... Args>
auto value_and_grad_impl(F& f, GraphCache& cache, const std::source_location& site, const Args&... args) {
  using Out = std::decay_t<decltype(f(args...))>;
  using Entry = TransformedEntry<Out>;
  constexpr bool default_arg = sizeof...(Is) == 0;
  auto [leaves, wrt] = default_arg ? leaves_with_flags<0>(args...) : leaves_with_flags<Is...>(args...);
  std::string key = signature_key(WithAux       ? "value_and_grad+aux"
                                  : Holomorphic ? "value_and_grad+holomorphic"
                                                : "value_and_grad",
                                  args...);
  // Refs of enclosing code that f uses are inputs that are not
  // differentiated, their final values outputs written back after the call.
  auto traced = trace_using_refs(f, args...);
  const size_t nr = traced.refs.size();
  for (Array& a : ref_initials(traced.refs)) leaves.push_back(a);
  wrt.resize(leaves.size(), false);
  std::vector<Array> captured = traced.captured;
  std::shared_ptr<const Entry> entry;
  if (!key.empty()) entry = std::static_pointer_cast<const Entry>(cache.find(key, traced.graph));
  if (!entry) {
    cache.count_trace();
    Graph vjp;
    try {
      vjp = grad_graph(traced.graph, captured.size(), leaves, wrt, WithAux, Holomorphic, nr);
    } catch (const Error&) {
      rethrow_with_site(WithAux ? "value_and_grad(has_aux)" : Holomorphic ? "grad(holomorphic)" : "grad", site);
    }
    entry = std::make_shared<const Entry>(Entry{std::move(vjp), traced.out});
    if (!key.empty()) cache.insert(key, traced.graph, entry);
  }
  size_t n_out = tree::leaves(entry->out_like).size();
  std::vector<Array> res = run_grad_graph(entry->graph, leaves, captured, n_out + nr);
  auto value = tree::unflatten(entry->out_like, std::vector<Array>(res.begin(), res.begin() + n_out));
  write_back_refs(traced.refs, std::vector<Array>(res.begin() + n_out, res.begin() + n_out + nr));
  std::vector<Array> grads(res.begin() + n_out + nr, res.end());
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

}  // namespace graft
