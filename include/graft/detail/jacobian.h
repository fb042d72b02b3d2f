// The machinery behind graft/jacobian.h: the nesting of a Jacobian's result,
// the basis, and the definitions of jacfwd, jacrev and hessian.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "graft/array.h"
#include "graft/autodiff.h"
#include "graft/ops.h"
#include "graft/tree.h"
#include "graft/vmap.h"

namespace graft {

namespace detail {

// The type of tree T with every Array leaf replaced by an Inner tree
// (the outer structure of a Jacobian), and how to build one.
template <class T, class Inner, class Enable = void>
struct Rebound {
  // A static leaf, or a GRAFT_PYTREE struct (whose tree::Node says so).
  static constexpr bool is_struct = requires { tree::Node<T>::is_struct; };
  static_assert(!is_struct || std::is_same_v<Inner, Array>,
                "graft: the Jacobian of a function returning a GRAFT_PYTREE struct can only be taken with respect to "
                "a single Array (a struct's Array fields cannot hold trees); return a std::tuple, std::vector or "
                "std::map instead, or differentiate with respect to one Array");
  using type = T;
  template <class Leaf>
  static type make(const T& like, Leaf& leaf) {
    if constexpr (is_struct) {
      std::vector<Array> blocks(tree::leaves(like).size());
      for (Array& b : blocks) b = leaf();
      return tree::unflatten(like, blocks);
    } else {
      return like;
    }
  }
};

template <class Inner>
struct Rebound<Array, Inner> {
  using type = Inner;
  template <class Leaf>
  static type make(const Array&, Leaf& leaf) {
    return leaf();
  }
};

template <class T, class Inner>
struct Rebound<std::vector<T>, Inner> {
  using type = std::vector<typename Rebound<T, Inner>::type>;
  template <class Leaf>
  static type make(const std::vector<T>& like, Leaf& leaf) {
    type out;
    out.reserve(like.size());
    for (const T& x : like) out.push_back(Rebound<T, Inner>::make(x, leaf));
    return out;
  }
};

template <class T, size_t N, class Inner>
struct Rebound<std::array<T, N>, Inner> {
  using type = std::array<typename Rebound<T, Inner>::type, N>;
  template <class Leaf, size_t... K>
  static type make_each(const std::array<T, N>& like, Leaf& leaf, std::index_sequence<K...>) {
    return type{Rebound<T, Inner>::make(like[K], leaf)...};  // braced: left to right
  }
  template <class Leaf>
  static type make(const std::array<T, N>& like, Leaf& leaf) {
    return make_each(like, leaf, std::make_index_sequence<N>{});
  }
};

template <class... Ts, class Inner>
struct Rebound<std::tuple<Ts...>, Inner> {
  using type = std::tuple<typename Rebound<Ts, Inner>::type...>;
  template <class Leaf>
  static type make(const std::tuple<Ts...>& like, Leaf& leaf) {
    return std::apply(
        [&](const auto&... x) { return type{Rebound<std::decay_t<decltype(x)>, Inner>::make(x, leaf)...}; }, like);
  }
};

template <class A, class B, class Inner>
struct Rebound<std::pair<A, B>, Inner> {
  using type = std::pair<typename Rebound<A, Inner>::type, typename Rebound<B, Inner>::type>;
  template <class Leaf>
  static type make(const std::pair<A, B>& like, Leaf& leaf) {
    auto a = Rebound<A, Inner>::make(like.first, leaf);
    auto b = Rebound<B, Inner>::make(like.second, leaf);
    return type{std::move(a), std::move(b)};
  }
};

template <class T, class Inner>
struct Rebound<std::map<std::string, T>, Inner> {
  using type = std::map<std::string, typename Rebound<T, Inner>::type>;
  template <class Leaf>
  static type make(const std::map<std::string, T>& like, Leaf& leaf) {
    type out;
    for (const auto& [k, v] : like) out.emplace(k, Rebound<T, Inner>::make(v, leaf));
    return out;
  }
};

// f with the arguments at Is replaced by the elements of sel (a tuple), the
// others as given: the function of the differentiated arguments alone.
template <size_t... Is, class All, class Sel, size_t... K>
void put_selected(All& all, const Sel& sel, std::index_sequence<K...>) {
  constexpr size_t index[] = {Is...};
  ((std::get<index[K]>(all) = std::get<K>(sel)), ...);
}

// The offsets of consecutive leaves in the flattened space of their elements.
std::vector<int64_t> leaf_offsets(const std::vector<Array>& leaves);
// Checks that every leaf is float (Jacobians are of float arrays), naming `what`.
void check_float_leaves(const std::vector<Array>& leaves, const char* what);
// The n x n identity, n the leaves' total size, in their widest float dtype
// (f32 or f64); checks them as check_float_leaves does.
Array flat_basis(const std::vector<Array>& leaves, const char* what);
// Entries [offset, offset + like.size) of flat, shaped and typed as like.
Array unflatten_piece(const Array& flat, int64_t offset, const Array& like);
// jacfwd's block: columns [N] + out.shape restricted to input leaf `in`
// (rows [offset, offset + in.size)), reordered to out.shape + in.shape.
Array forward_block(const Array& columns, int64_t offset, const Array& in);
// jacrev's block: rows [M] + in.shape restricted to output leaf `out`,
// reshaped to out.shape + in.shape.
Array reverse_block(const Array& rows, int64_t offset, const Array& out);

// Which arguments a Jacobian is taken with respect to, and the tree type
// of the inner structure: the argument's own tree for one index (argument 0
// when none is given), a std::tuple of trees for several.
template <size_t... Is>
using WrtIndices = std::conditional_t<sizeof...(Is) == 0, std::index_sequence<0>, std::index_sequence<Is...>>;

// The Jacobian in both modes. Forward: d(outputs)/d(selected) from one
// batched jvp; reverse: one batched vjp.
template <bool Forward, size_t... Is, class F, class... Args>
auto jacobian_impl(F& f, const Args&... args) {
  constexpr size_t n_args = sizeof...(Args);
  static_assert(n_args > 0, "graft: jacfwd/jacrev/hessian need an argument to differentiate");
  using All = std::tuple<Args...>;
  const All all{args...};
  return [&]<size_t... Sel>(std::index_sequence<Sel...>) {
    using SelTuple = std::tuple<std::tuple_element_t<Sel, All>...>;
    const SelTuple sel{std::get<Sel>(all)...};
    // f of the selected arguments, the others held fixed.
    auto g = [&f, &all](const SelTuple& s) {
      All a = all;
      put_selected<Sel...>(a, s, std::index_sequence_for<std::tuple_element_t<Sel, All>...>{});
      return std::apply(f, a);
    };
    using Out = std::decay_t<decltype(g(sel))>;
    std::vector<Array> in_leaves = tree::leaves(sel);
    std::vector<int64_t> in_off = leaf_offsets(in_leaves);

    std::optional<Out> y;
    std::vector<std::vector<Array>> blocks;  // blocks[i][j]: output leaf i by input leaf j
    if constexpr (Forward) {
      Array basis = flat_basis(in_leaves, "jacfwd: input");
      auto push = [&](const Array& t) {
        std::vector<Array> t_leaves;
        for (size_t j = 0; j < in_leaves.size(); ++j) t_leaves.push_back(unflatten_piece(t, in_off[j], in_leaves[j]));
        SelTuple tangents = tree::unflatten(sel, t_leaves);
        return tree::leaves(jvp(g, std::make_tuple(sel), std::make_tuple(tangents)).second);
      };
      std::vector<Array> columns = vmap(push)(basis);  // each [N] + out_i.shape
      y.emplace(trace_function(g, sel).out);           // the output's structure (its leaves are dead tracers)
      for (const Array& c : columns) {
        std::vector<Array> row;
        for (size_t j = 0; j < in_leaves.size(); ++j) row.push_back(forward_block(c, in_off[j], in_leaves[j]));
        blocks.push_back(std::move(row));
      }
    } else {
      check_float_leaves(in_leaves, "jacrev: input");  // integer inputs have no Jacobian
      // Not a structured binding: `pull` captures both, which clang refuses under -fopenmp.
      auto value_and_pullback = vjp(g, sel);
      const auto& value = value_and_pullback.first;
      const auto& pullback = value_and_pullback.second;
      y.emplace(value);
      std::vector<Array> out_leaves = tree::leaves(value);
      std::vector<int64_t> out_off = leaf_offsets(out_leaves);
      Array basis = flat_basis(out_leaves, "jacrev: output");
      auto pull = [&](const Array& u) {
        std::vector<Array> u_leaves;
        for (size_t i = 0; i < out_leaves.size(); ++i)
          u_leaves.push_back(unflatten_piece(u, out_off[i], out_leaves[i]));
        return tree::leaves(std::get<0>(pullback(tree::unflatten(value, u_leaves))));
      };
      std::vector<Array> rows = vmap(pull)(basis);  // each [M] + in_j.shape
      for (size_t i = 0; i < out_leaves.size(); ++i) {
        std::vector<Array> row;
        for (size_t j = 0; j < in_leaves.size(); ++j) row.push_back(reverse_block(rows[j], out_off[i], out_leaves[i]));
        blocks.push_back(std::move(row));
      }
    }

    // Output structure outside, the selected arguments' structure inside.
    size_t next = 0;
    if constexpr (sizeof...(Sel) == 1) {
      using Inner = std::tuple_element_t<0, SelTuple>;
      const Inner& inner_like = std::get<0>(sel);
      auto leaf = [&] { return tree::unflatten(inner_like, blocks[next++]); };
      return Rebound<Out, Inner>::make(*y, leaf);
    } else {
      auto leaf = [&] { return tree::unflatten(sel, blocks[next++]); };
      return Rebound<Out, SelTuple>::make(*y, leaf);
    }
  }
  (WrtIndices<Is...>{});
}

}  // namespace detail

namespace detail {
// The callable jacfwd/jacrev return: argnums and differentiability checked first, then the Jacobian in one mode.
template <bool Forward, size_t... Is, class F>
auto jacobian_wrapper(F f) {
  return [f](const auto&... args) {
    if constexpr (!argnums_ok<sizeof...(args), Is...>)
      static_assert(argnums_ok<sizeof...(args), Is...>, GRAFT_ARGNUMS_MESSAGE);
    else if constexpr (differentiable_arguments<std::tuple<std::decay_t<decltype(args)>...>, Is...>())
      return jacobian_impl<Forward, Is...>(f, args...);
  };
}
}  // namespace detail

template <size_t... Is, class F>
auto jacfwd(F f) {
  return detail::jacobian_wrapper<true, Is...>(std::move(f));
}

template <size_t... Is, class F>
auto jacrev(F f) {
  return detail::jacobian_wrapper<false, Is...>(std::move(f));
}

template <size_t... Is, class F>
auto hessian(F f) {
  return jacfwd<Is...>(jacrev<Is...>(f));
}

}  // namespace graft
