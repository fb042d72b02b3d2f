// Structured control flow on traced values, as JAX's lax: cond, switch_,
// while_loop, fori_loop and scan. Each traces its functions once into
// subgraphs and emits one node (cond, while, scan), so a branch or a loop
// body on traced values stays in the graph instead of being unrolled.
// Called outside every transform, the node runs right away.
//
// Operands, carries and scanned values are pytrees (graft/tree.h) with
// Array leaves. Values a function closes over that belong to an enclosing
// trace become explicit operands of the node; closed-over concrete arrays
// become constants of the subgraph.
#pragma once

#include <cstdint>
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

#include "graft/detail/control_flow.h"

namespace graft {

// cond(pred, true_fn, false_fn, operands...): true_fn(operands...) when the
// scalar pred (bool, or an integer: nonzero is true) holds, else
// false_fn(operands...). Both must return the same structure, shapes and
// dtypes (ShapeError / DTypeError naming the branch otherwise).
template <class TrueFn, class FalseFn, class... Operands>
auto cond(ArrayAt pred, TrueFn true_fn, FalseFn false_fn, const Operands&... operands) {
  // Refs of enclosing code a branch uses are extra operands and results (both branches bind them).
  std::vector<std::shared_ptr<detail::RefState>> refs, more;
  auto f = detail::trace_once(true, {}, &refs, false_fn, operands...);
  auto t = detail::trace_once(true, {}, &more, true_fn, operands...);
  static_assert(std::is_same_v<decltype(f.out), decltype(t.out)>,
                "cond: true_fn and false_fn must return the same C++ type");
  detail::merge_refs(refs, more);
  if (!refs.empty()) {
    f = detail::trace_once(true, refs, nullptr, false_fn, operands...);
    t = detail::trace_once(true, refs, nullptr, true_fn, operands...);
  }
  auto out_like = f.out;
  std::vector<detail::TracedBody> branches;
  branches.push_back(detail::traced_body(std::move(f)));
  branches.push_back(detail::traced_body(std::move(t)));
  std::vector<Array> args = detail::all_leaves(operands...);
  for (Array& a : detail::ref_initials(refs)) args.push_back(a);
  std::vector<Array> outs = detail::cond_bind(false, pred.array, branches, args, pred.loc);
  return tree::unflatten(out_like, detail::split_ref_results(refs, outs));
}

// switch_(index, branches, operands...): branches[index](operands...), the
// integer scalar index clamped to [0, branches.size() - 1].
template <class F, class... Operands>
auto switch_(ArrayAt index, const std::vector<F>& branches, const Operands&... operands) {
  using Out = std::decay_t<std::invoke_result_t<F&, const Operands&...>>;
  std::vector<std::shared_ptr<detail::RefState>> refs;
  for (const F& branch : branches) {
    F fn = branch;
    std::vector<std::shared_ptr<detail::RefState>> used;
    detail::trace_once(true, {}, &used, fn, operands...);
    detail::merge_refs(refs, used);
  }
  std::vector<detail::TracedBody> traced;
  std::optional<Out> out_like;
  for (const F& branch : branches) {
    F fn = branch;
    auto t = detail::trace_once(true, refs, nullptr, fn, operands...);
    if (!out_like) out_like.emplace(t.out);
    traced.push_back(detail::traced_body(std::move(t)));
  }
  std::vector<Array> args = detail::all_leaves(operands...);
  for (Array& a : detail::ref_initials(refs)) args.push_back(a);
  // With no branches cond_bind throws before out_like is read.
  std::vector<Array> outs = detail::cond_bind(true, index.array, traced, args, index.loc);
  return tree::unflatten(*out_like, detail::split_ref_results(refs, outs));
}

// How reverse mode runs a while_loop backwards: it counts the trips N, then
// keeps copies of the carry in a fixed number of slots, half of them every
// ceil(N / (checkpoints/2))-th step, half within one segment, and
// recomputes the rest; no step runs more than twice while
// N <= (checkpoints/2)^2, and memory never grows with N.
struct WhileOptions {
  int64_t checkpoints = 128;  // carries the backward pass may keep (2 to 2^30)
};

// while_loop(cond_fn, body_fn, init): carry = init; while cond_fn(carry)
// (a bool scalar Array) carry = body_fn(carry); returns carry. body_fn must
// keep the carry's structure, shapes and dtypes. Differentiable in forward
// and reverse mode (the latter within WhileOptions' memory bound).
template <class CondFn, class BodyFn, class T>
T while_loop(CondFn cond_fn, BodyFn body_fn, const T& init, std::source_location loc = std::source_location::current()) {
  return detail::while_impl("while_loop", cond_fn, body_fn, init, WhileOptions{}.checkpoints, loc);
}

// The same, with reverse mode's memory bound given.
template <class CondFn, class BodyFn, class T>
T while_loop(CondFn cond_fn, BodyFn body_fn, const T& init, WhileOptions options,
             std::source_location loc = std::source_location::current()) {
  return detail::while_impl("while_loop", cond_fn, body_fn, init, options.checkpoints, loc);
}

// scan(f, init, xs, length = -1, reverse = false) -> (carry, ys):
// f(carry, x) returns (carry, y); x is xs sliced on axis 0 and the ys are
// stacked on a new axis 0. length is inferred from xs when negative (xs may
// be an empty tree, e.g. std::tuple<>{}, when length is given). reverse runs
// from the last slice to the first, each y stored at its x's index.
template <class F, class Carry, class Xs>
auto scan(F f, const Carry& init, const Xs& xs, int64_t length = -1, bool reverse = false,
          std::source_location loc = std::source_location::current()) {
  return detail::scan_impl("scan", f, init, xs, length, reverse, loc);
}

// fori_loop(lo, hi, body, init): carry = init; for i in [lo, hi) carry =
// body(i, carry), i an i32 scalar Array. With integer bounds this is a scan
// of hi - lo steps (so reverse mode can differentiate it).
template <class BodyFn, class T>
T fori_loop(int64_t lo, int64_t hi, BodyFn body, const T& init,
            std::source_location loc = std::source_location::current()) {
  using State = std::pair<Array, T>;
  auto step = [&body](const State& s, const std::tuple<>&) {
    T next = body(s.first, s.second);
    return std::make_pair(State{s.first + 1, std::move(next)}, std::tuple<>{});
  };
  State start{scalar(static_cast<double>(lo), DType::i32, loc), init};
  int64_t n = hi > lo ? hi - lo : 0;
  return detail::scan_impl("fori_loop", step, start, std::tuple<>{}, n, false, loc).first.second;
}

// fori_loop with Array bounds (integer scalars, possibly traced): a
// while_loop over (i, carry).
template <class BodyFn, class T>
T fori_loop(const Array& lo, const Array& hi, BodyFn body, const T& init,
            std::source_location loc = std::source_location::current()) {
  using State = std::pair<Array, T>;
  auto [lo32, hi32] = detail::fori_bounds(lo, hi, loc);
  auto cond_fn = [hi = hi32](const State& s) { return s.first < hi; };
  auto body_fn = [&body](const State& s) { return State{s.first + 1, T(body(s.first, s.second))}; };
  return detail::while_impl("fori_loop", cond_fn, body_fn, State{lo32, init}, WhileOptions{}.checkpoints, loc).second;
}

}  // namespace graft
