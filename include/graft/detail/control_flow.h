// The machinery behind graft/control_flow.h: tracing branches and bodies, and
// the calls that bind cond, while_loop and scan.
// Not part of the API: names here may change.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "graft/array.h"
#include "graft/autodiff.h"
#include "graft/detail/source_location.h"
#include "graft/graph.h"
#include "graft/tree.h"

namespace graft {

namespace detail {

// A function traced for a control-flow node: its graph (inputs: the
// argument leaves, then the captured values), what it captured, and the
// structure of its result with the Array leaves left out.
struct TracedBody {
  Graph graph;
  std::vector<Array> captured;
  std::string out_structure;
  std::vector<std::shared_ptr<RefState>> refs;  // enclosing Refs the loop carries (trace_using_refs)
};

// The structure of t with its Array leaves blanked: two trees whose leaves
// differ only in type or value describe alike.
template <class T>
std::string blank_structure(const T& t) {
  return tree::structure(tree::unflatten(t, std::vector<Array>(tree::leaves(t).size())));
}

template <class Out>
TracedBody traced_body(TracedFunction<Out>&& t) {
  return TracedBody{std::move(t.graph), std::move(t.captured), blank_structure(t.out), std::move(t.refs)};
}

// Emit the nodes (or run them eagerly); the non-template side in api/control_flow.cpp.
// is_switch: `index` is switch_'s integer index, else cond's predicate.
std::vector<Array> cond_bind(bool is_switch, const Array& index, const std::vector<TracedBody>& branches,
                             const std::vector<Array>& operands, const std::source_location& loc);
// checkpoints: WhileOptions::checkpoints (checked here, an Error naming `what` and the line).
std::vector<Array> while_bind(const char* what, const TracedBody& cond, const TracedBody& body,
                              const std::string& init_structure, const std::vector<Array>& init, int64_t checkpoints,
                              const std::source_location& loc);
// The number of iterations: length, or the leading dimension every xs leaf shares.
int64_t scan_length(const std::vector<Array>& xs, int64_t length, const std::source_location& loc);
// Arrays of one slice's type (xs without axis 0), to trace the body with.
std::vector<Array> scan_slices_like(const std::vector<Array>& xs);
// body's outputs: the carry leaves, then the y leaves; body.out_structure
// describes the carry it returns.
std::vector<Array> scan_bind(const char* what, const TracedBody& body, const std::string& init_structure,
                             const std::vector<Array>& init, const std::vector<Array>& xs, int64_t length, bool reverse,
                             const std::source_location& loc);
// Adds the Refs of `more` that `refs` lacks.
void merge_refs(std::vector<std::shared_ptr<RefState>>& refs, const std::vector<std::shared_ptr<RefState>>& more);
// A cond's results: the Refs' finals (the last refs.size()) written back, the others returned.
std::vector<Array> split_ref_results(const std::vector<std::shared_ptr<RefState>>& refs, std::vector<Array> outs);
// A scan body traced as (carry.., x.., refs..) -> (carry.., y.., ref finals..)
// rewired to (carry.., refs.., x..) -> (carry.., ref finals.., y..), so the
// Refs are carries.
void carry_refs_through_scan(TracedBody& body, size_t num_carry, size_t num_xs);
// A while cond traced with the loop's Refs bound: its Ref outputs dropped
// (an UnsupportedError if it wrote one).
void cond_reads_refs(TracedBody& cond, const std::source_location& loc);
// fori_loop's Array bounds as i32 scalars (DTypeError for non-integers).
std::pair<Array, Array> fori_bounds(const Array& lo, const Array& hi, const std::source_location& loc);

template <class T>
constexpr bool is_pair_like = false;
template <class A, class B>
constexpr bool is_pair_like<std::pair<A, B>> = true;
template <class A, class B>
constexpr bool is_pair_like<std::tuple<A, B>> = true;

template <class CondFn, class BodyFn, class T>
T while_impl(const char* what, CondFn& cond_fn, BodyFn& body_fn, const T& init, int64_t checkpoints,
             const std::source_location& loc) {
  // Enclosing Refs either function uses are carried (both traced again with them bound).
  std::vector<std::shared_ptr<RefState>> in_cond, in_body;
  auto c = trace_once(true, {}, &in_cond, cond_fn, init);
  auto b = trace_once(true, {}, &in_body, body_fn, init);
  static_assert(std::is_same_v<std::decay_t<decltype(b.out)>, T>,
                "while_loop: body_fn must return the carry with the C++ type of init");
  merge_refs(in_cond, in_body);
  if (!in_cond.empty()) {
    c = trace_once(true, in_cond, nullptr, cond_fn, init);
    b = trace_once(true, in_cond, nullptr, body_fn, init);
  }
  TracedBody cond = traced_body(std::move(c));
  TracedBody body = traced_body(std::move(b));
  std::vector<Array> carry = tree::leaves(init);
  const size_t nc = carry.size();
  std::string structure = blank_structure(init);
  if (!body.refs.empty()) {
    cond_reads_refs(cond, loc);
    for (Array& a : ref_initials(body.refs)) carry.push_back(a);
    structure += " + " + std::to_string(body.refs.size()) + " Refs";
    body.out_structure += " + " + std::to_string(body.refs.size()) + " Refs";
  }
  std::vector<Array> outs = while_bind(what, cond, body, structure, carry, checkpoints, loc);
  write_back_refs(body.refs, std::vector<Array>(outs.begin() + static_cast<std::ptrdiff_t>(nc), outs.end()));
  outs.resize(nc);
  return tree::unflatten(init, outs);
}

template <class Carry, class Xs, class F>
auto scan_impl(const char* what, F& f, const Carry& init, const Xs& xs, int64_t length, bool reverse,
               const std::source_location& loc) {
  std::vector<Array> x_leaves = tree::leaves(xs);
  int64_t n = scan_length(x_leaves, length, loc);
  Xs x_like = tree::unflatten(xs, scan_slices_like(x_leaves));
  auto traced = trace_using_refs(f, init, x_like);
  using Out = std::decay_t<decltype(traced.out)>;
  if constexpr (!is_pair_like<Out>) {
    // One message, then nothing else instantiated (the caller still gets a pair).
    static_assert(is_pair_like<Out>,
                  "scan: f(carry, x) must return std::pair<Carry, Y> (or a two-element std::tuple): "
                  "return {new_carry, y}; with nothing to stack per step, return {new_carry, std::tuple<>{}}");
    return std::pair<Carry, std::tuple<>>{init, {}};
  } else if constexpr (!std::is_same_v<std::decay_t<std::tuple_element_t<0, Out>>, Carry>) {
    static_assert(std::is_same_v<std::decay_t<std::tuple_element_t<0, Out>>, Carry>,
                  "scan: f must return its carry with the C++ type of init");
    return std::pair<Carry, std::tuple<>>{init, {}};
  } else {
    auto ys_like = std::get<1>(traced.out);
    std::string carry_structure = blank_structure(std::get<0>(traced.out));
    TracedBody body{std::move(traced.graph), std::move(traced.captured), std::move(carry_structure),
                    std::move(traced.refs)};
    std::vector<Array> carry_in = tree::leaves(init);
    size_t nc = carry_in.size();
    std::string init_structure = blank_structure(init);
    const size_t nr = body.refs.size();
    if (nr) {
      // Enclosing Refs the body uses are extra carries, written back after the loop.
      carry_refs_through_scan(body, nc, x_leaves.size());
      for (Array& a : ref_initials(body.refs)) carry_in.push_back(a);
      init_structure += " + " + std::to_string(nr) + " Refs";
      body.out_structure += " + " + std::to_string(nr) + " Refs";
    }
    std::vector<Array> outs = scan_bind(what, body, init_structure, carry_in, x_leaves, n, reverse, loc);
    write_back_refs(body.refs, std::vector<Array>(outs.begin() + static_cast<std::ptrdiff_t>(nc),
                                                  outs.begin() + static_cast<std::ptrdiff_t>(nc + nr)));
    outs.erase(outs.begin() + static_cast<std::ptrdiff_t>(nc), outs.begin() + static_cast<std::ptrdiff_t>(nc + nr));
    Carry carry = tree::unflatten(init, std::vector<Array>(outs.begin(), outs.begin() + nc));
    auto ys = tree::unflatten(ys_like, std::vector<Array>(outs.begin() + nc, outs.end()));
    return std::make_pair(std::move(carry), std::move(ys));
  }
}

}  // namespace detail

}  // namespace graft
