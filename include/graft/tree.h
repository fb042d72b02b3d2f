// Pytrees: nested containers whose leaves are Arrays. Containers are
// std::vector, std::array, std::tuple, std::pair, std::map<std::string, T>
// and structs registered with GRAFT_PYTREE; other values (numbers, strings,
// enums) are static leaves: part of the structure, never traced.
#pragma once

#include <array>
#include <charconv>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "graft/array.h"

namespace graft::tree {

// The shape of a tree: how many Array leaves it has, and its children's
// shapes (none for a leaf). vmap matches its axes specifications against it.
struct TreeShape {
  size_t leaves = 0;
  std::vector<TreeShape> children;
};

// How a static leaf that cannot be described by value (not a number, enum or
// string) appears in a structure description.
inline constexpr const char* kOpaqueStatic = "<opaque static>";

// Node<T> says how to take T apart, put it back together and describe it.
// The primary template is a static leaf.
template <class T, class Enable = void>
struct Node {
  static constexpr bool static_leaf = true;
  static void flatten(const T&, std::vector<Array>&) {}
  static T unflatten(const T& like, const Array*&) { return like; }
  static void shape(const T&, TreeShape&) {}
  static void paths(const T&, const std::string&, std::vector<std::string>&) {}
  static void describe(const T& t, std::string& out) {
    // Appends piecewise: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string.
    if constexpr (std::is_floating_point_v<T>) {
      // Shortest round-trip form: distinct values must describe distinctly,
      // since transforms cache their graphs by this description.
      char buf[64];
      auto res = std::to_chars(buf, buf + sizeof buf, t);
      out.append(buf, res.ptr);
    } else if constexpr (std::is_arithmetic_v<T>) {
      out += std::to_string(t);
    } else if constexpr (std::is_enum_v<T>) {
      out += "enum ";
      out += std::to_string(static_cast<long long>(t));
    } else if constexpr (std::is_convertible_v<T, std::string>) {
      out += '\'';
      out += std::string(t);
      out += '\'';
    } else {
      out += kOpaqueStatic;  // not comparable: transforms never reuse a graph traced with one
    }
  }
};

namespace detail {
std::string describe_leaf(const Array& a);  // "f32[3,4]", or "traced f32[3,4]"
}

template <>
struct Node<Array> {
  static void flatten(const Array& a, std::vector<Array>& out) { out.push_back(a); }
  static Array unflatten(const Array&, const Array*& it) { return *it++; }
  static void shape(const Array&, TreeShape& s) { s.leaves = 1; }
  static void paths(const Array&, const std::string& at, std::vector<std::string>& out) { out.push_back(at); }
  static void describe(const Array& a, std::string& out) { out += detail::describe_leaf(a); }
};

namespace detail {
// Appends the paths of x's leaves under `at`: Node<T>::paths where the node
// has it (a node written before paths existed gets "at[i]" per leaf).
template <class T>
void add_paths(const T& x, const std::string& at, std::vector<std::string>& out) {
  if constexpr (requires(std::vector<std::string>& o) { Node<T>::paths(x, at, o); }) {
    Node<T>::paths(x, at, out);
  } else {
    std::vector<Array> leaves;
    Node<T>::flatten(x, leaves);
    for (size_t i = 0; i < leaves.size(); ++i) out.push_back(at + "[" + std::to_string(i) + "]");
  }
}
inline std::string index_path(const std::string& at, size_t i) { return at + "[" + std::to_string(i) + "]"; }

// Appends the shape of child x to s.
template <class T>
void add_child(const T& x, TreeShape& s) {
  TreeShape c;
  Node<T>::shape(x, c);
  s.leaves += c.leaves;
  s.children.push_back(std::move(c));
}
}  // namespace detail

// Sequences: std::vector and std::array.
template <class Seq, class T>
struct SequenceNode {
  static void flatten(const Seq& v, std::vector<Array>& out) {
    for (const T& x : v) Node<T>::flatten(x, out);
  }
  static Seq unflatten(const Seq& like, const Array*& it) {
    Seq v = like;
    auto dst = v.begin();
    for (const T& x : like) *dst++ = Node<T>::unflatten(x, it);
    return v;
  }
  static void shape(const Seq& v, TreeShape& s) {
    for (const T& x : v) detail::add_child(x, s);
  }
  static void paths(const Seq& v, const std::string& at, std::vector<std::string>& out) {
    size_t i = 0;
    for (const T& x : v) detail::add_paths(x, detail::index_path(at, i++), out);
  }
  static void describe(const Seq& v, std::string& out) {
    out += '[';
    for (const T& x : v) {
      Node<T>::describe(x, out);
      out += ',';
    }
    out += ']';
  }
};
template <class T>
struct Node<std::vector<T>> : SequenceNode<std::vector<T>, T> {};
template <class T, size_t N>
struct Node<std::array<T, N>> : SequenceNode<std::array<T, N>, T> {};

template <class... Ts>
struct Node<std::tuple<Ts...>> {
  static void flatten(const std::tuple<Ts...>& t, std::vector<Array>& out) {
    std::apply([&](const auto&... x) { (Node<std::decay_t<decltype(x)>>::flatten(x, out), ...); }, t);
  }
  static std::tuple<Ts...> unflatten(const std::tuple<Ts...>& like, const Array*& it) {
    // Braced initialisation evaluates left to right, matching flatten's order.
    return std::apply([&](const auto&... x) { return std::tuple<Ts...>{Node<std::decay_t<decltype(x)>>::unflatten(x, it)...}; },
                      like);
  }
  static void shape(const std::tuple<Ts...>& t, TreeShape& s) {
    std::apply([&](const auto&... x) { (detail::add_child(x, s), ...); }, t);
  }
  static void paths(const std::tuple<Ts...>& t, const std::string& at, std::vector<std::string>& out) {
    size_t i = 0;
    std::apply([&](const auto&... x) { (detail::add_paths(x, detail::index_path(at, i++), out), ...); }, t);
  }
  static void describe(const std::tuple<Ts...>& t, std::string& out) {
    out += '(';
    std::apply([&](const auto&... x) { ((Node<std::decay_t<decltype(x)>>::describe(x, out), out += ','), ...); }, t);
    out += ')';
  }
};

template <class A, class B>
struct Node<std::pair<A, B>> {
  static void flatten(const std::pair<A, B>& p, std::vector<Array>& out) {
    Node<A>::flatten(p.first, out);
    Node<B>::flatten(p.second, out);
  }
  static std::pair<A, B> unflatten(const std::pair<A, B>& like, const Array*& it) {
    A a = Node<A>::unflatten(like.first, it);
    B b = Node<B>::unflatten(like.second, it);
    return {std::move(a), std::move(b)};
  }
  static void shape(const std::pair<A, B>& p, TreeShape& s) {
    detail::add_child(p.first, s);
    detail::add_child(p.second, s);
  }
  static void paths(const std::pair<A, B>& p, const std::string& at, std::vector<std::string>& out) {
    detail::add_paths(p.first, detail::index_path(at, 0), out);
    detail::add_paths(p.second, detail::index_path(at, 1), out);
  }
  static void describe(const std::pair<A, B>& p, std::string& out) {
    out += '(';
    Node<A>::describe(p.first, out);
    out += ',';
    Node<B>::describe(p.second, out);
    out += ')';
  }
};

template <class T>
struct Node<std::map<std::string, T>> {
  static void flatten(const std::map<std::string, T>& m, std::vector<Array>& out) {
    for (const auto& [k, v] : m) Node<T>::flatten(v, out);
  }
  static std::map<std::string, T> unflatten(const std::map<std::string, T>& like, const Array*& it) {
    std::map<std::string, T> m;
    for (const auto& [k, v] : like) m.emplace(k, Node<T>::unflatten(v, it));
    return m;
  }
  static void shape(const std::map<std::string, T>& m, TreeShape& s) {
    for (const auto& [k, v] : m) detail::add_child(v, s);
  }
  static void paths(const std::map<std::string, T>& m, const std::string& at, std::vector<std::string>& out) {
    for (const auto& [k, v] : m) detail::add_paths(v, at + "['" + k + "']", out);
  }
  static void describe(const std::map<std::string, T>& m, std::string& out) {
    out += '{';
    for (const auto& [k, v] : m) {
      out += k;
      out += ':';
      Node<T>::describe(v, out);
      out += ',';
    }
    out += '}';
  }
};

namespace detail {
// What a tree type can hold, known at compile time: Array leaves, and static
// leaves that cannot be described by value (so no transform can cache on
// them). A user's own Node specialization counts as holding Arrays.
template <class T>
struct Holds {
  static constexpr bool arrays() {
    if constexpr (requires { Node<T>::static_leaf; }) return false;
    else if constexpr (requires { Node<T>::holds_arrays; }) return Node<T>::holds_arrays;
    else return true;
  }
  static constexpr bool opaque() {
    if constexpr (requires { Node<T>::static_leaf; })
      return !(std::is_arithmetic_v<T> || std::is_enum_v<T> || std::is_convertible_v<T, std::string>);
    else if constexpr (requires { Node<T>::holds_opaque; }) return Node<T>::holds_opaque;
    else return false;
  }
};
template <class T>
struct Holds<std::vector<T>> : Holds<T> {};
template <class T, size_t N>
struct Holds<std::array<T, N>> : Holds<T> {};
template <class T>
struct Holds<std::map<std::string, T>> : Holds<T> {};
template <class... Ts>
struct Holds<std::tuple<Ts...>> {
  static constexpr bool arrays() { return (Holds<Ts>::arrays() || ...); }
  static constexpr bool opaque() { return (Holds<Ts>::opaque() || ...); }
};
template <class A, class B>
struct Holds<std::pair<A, B>> {
  static constexpr bool arrays() { return Holds<A>::arrays() || Holds<B>::arrays(); }
  static constexpr bool opaque() { return Holds<A>::opaque() || Holds<B>::opaque(); }
};
}  // namespace detail

// Whether a T can hold Array leaves (false for numbers, strings and structs
// not registered with GRAFT_PYTREE, which are static leaves).
template <class T>
inline constexpr bool holds_arrays = detail::Holds<std::decay_t<T>>::arrays();

// Whether a T holds a static leaf that is not a number, enum or string (an
// unregistered struct, a pointer): transforms cannot tell two of them apart.
template <class T>
inline constexpr bool holds_opaque_static = detail::Holds<std::decay_t<T>>::opaque();

// The Array leaves of t, in order.
template <class T>
std::vector<Array> leaves(const T& t) {
  std::vector<Array> out;
  Node<T>::flatten(t, out);
  return out;
}

// A tree shaped like `like` whose Array leaves are `values`, in order.
template <class T>
T unflatten(const T& like, const std::vector<Array>& values) {
  if (values.size() != leaves(like).size())
    throw std::invalid_argument("tree::unflatten: " + std::to_string(values.size()) + " values for a tree of " +
                                std::to_string(leaves(like).size()) + " leaves");
  const Array* it = values.data();
  return Node<T>::unflatten(like, it);
}

// The path of each Array leaf of t, in leaf order, as JAX's keystr writes
// them under the root name `root`: "root.field" for a GRAFT_PYTREE struct
// ("field" when root is empty), "root[i]" for sequences, tuples and pairs,
// "root['key']" for maps. make_graph names a graph's inputs and outputs so.
template <class T>
std::vector<std::string> paths(const T& t, const std::string& root = "") {
  std::vector<std::string> out;
  detail::add_paths(t, root, out);
  return out;
}

template <class T>
TreeShape shape(const T& t) {
  TreeShape s;
  Node<T>::shape(t, s);
  return s;
}

// A readable description of t's structure: containers, static leaves by
// value, Arrays by dtype and shape. Trees with equal structure trace alike.
template <class T>
std::string structure(const T& t) {
  std::string out;
  Node<T>::describe(t, out);
  return out;
}

namespace detail {
template <class F, size_t N, size_t... I>
Array apply_at(F& f, const Array& x, const std::array<std::vector<Array>, N>& others, [[maybe_unused]] size_t i,
               std::index_sequence<I...>) {
  return f(x, others[I][i]...);
}
}  // namespace detail

// f applied to every Array leaf of t, together with the matching leaves of
// ts (trees with t's structure); the result has t's structure.
template <class F, class T, class... Ts>
T map(F f, const T& t, const Ts&... ts) {
  std::vector<Array> a = leaves(t);
  std::array<std::vector<Array>, sizeof...(Ts)> others{leaves(ts)...};
  for (const auto& o : others)
    if (o.size() != a.size()) throw std::invalid_argument("tree::map: the trees have different numbers of leaves");
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = detail::apply_at(f, a[i], others, i, std::index_sequence_for<Ts...>{});
  return unflatten(t, a);
}

}  // namespace graft::tree

// ---- GRAFT_PYTREE(Type, field1, field2, ...): registers a struct (up to 16
// fields) as a pytree node. Use at namespace scope; a trailing ; is allowed.
#define GRAFT_PT_EXPAND(x) x
#define GRAFT_PT_FE_1(m, x) m(x)
#define GRAFT_PT_FE_2(m, x, ...) m(x) GRAFT_PT_EXPAND(GRAFT_PT_FE_1(m, __VA_ARGS__))
#define GRAFT_PT_FE_3(m, x, ...) m(x) GRAFT_PT_EXPAND(GRAFT_PT_FE_2(m, __VA_ARGS__))
#define GRAFT_PT_FE_4(m, x, ...) m(x) GRAFT_PT_EXPAND(GRAFT_PT_FE_3(m, __VA_ARGS__))
#define GRAFT_PT_FE_5(m, x, ...) m(x) GRAFT_PT_EXPAND(GRAFT_PT_FE_4(m, __VA_ARGS__))
#define GRAFT_PT_FE_6(m, x, ...) m(x) GRAFT_PT_EXPAND(GRAFT_PT_FE_5(m, __VA_ARGS__))
#define GRAFT_PT_FE_7(m, x, ...) m(x) GRAFT_PT_EXPAND(GRAFT_PT_FE_6(m, __VA_ARGS__))
#define GRAFT_PT_FE_8(m, x, ...) m(x) GRAFT_PT_EXPAND(GRAFT_PT_FE_7(m, __VA_ARGS__))
#define GRAFT_PT_FE_9(m, x, ...) m(x) GRAFT_PT_EXPAND(GRAFT_PT_FE_8(m, __VA_ARGS__))
#define GRAFT_PT_FE_10(m, x, ...) m(x) GRAFT_PT_EXPAND(GRAFT_PT_FE_9(m, __VA_ARGS__))
#define GRAFT_PT_FE_11(m, x, ...) m(x) GRAFT_PT_EXPAND(GRAFT_PT_FE_10(m, __VA_ARGS__))
#define GRAFT_PT_FE_12(m, x, ...) m(x) GRAFT_PT_EXPAND(GRAFT_PT_FE_11(m, __VA_ARGS__))
#define GRAFT_PT_FE_13(m, x, ...) m(x) GRAFT_PT_EXPAND(GRAFT_PT_FE_12(m, __VA_ARGS__))
#define GRAFT_PT_FE_14(m, x, ...) m(x) GRAFT_PT_EXPAND(GRAFT_PT_FE_13(m, __VA_ARGS__))
#define GRAFT_PT_FE_15(m, x, ...) m(x) GRAFT_PT_EXPAND(GRAFT_PT_FE_14(m, __VA_ARGS__))
#define GRAFT_PT_FE_16(m, x, ...) m(x) GRAFT_PT_EXPAND(GRAFT_PT_FE_15(m, __VA_ARGS__))
#define GRAFT_PT_PICK(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, NAME, ...) NAME
#define GRAFT_PT_FOR_EACH(m, ...)                                                                              \
  GRAFT_PT_EXPAND(GRAFT_PT_PICK(__VA_ARGS__, GRAFT_PT_FE_16, GRAFT_PT_FE_15, GRAFT_PT_FE_14, GRAFT_PT_FE_13,   \
                                GRAFT_PT_FE_12, GRAFT_PT_FE_11, GRAFT_PT_FE_10, GRAFT_PT_FE_9, GRAFT_PT_FE_8,  \
                                GRAFT_PT_FE_7, GRAFT_PT_FE_6, GRAFT_PT_FE_5, GRAFT_PT_FE_4, GRAFT_PT_FE_3,     \
                                GRAFT_PT_FE_2, GRAFT_PT_FE_1)(m, __VA_ARGS__))

#define GRAFT_PT_FLATTEN_FIELD(f) ::graft::tree::Node<std::decay_t<decltype(t.f)>>::flatten(t.f, out);
#define GRAFT_PT_UNFLATTEN_FIELD(f) r.f = ::graft::tree::Node<std::decay_t<decltype(like.f)>>::unflatten(like.f, it);
#define GRAFT_PT_SHAPE_FIELD(f) ::graft::tree::detail::add_child(t.f, s);
#define GRAFT_PT_PATHS_FIELD(f) ::graft::tree::detail::add_paths(t.f, at.empty() ? std::string(#f) : at + "." #f, out);
#define GRAFT_PT_HOLDS_FIELD(f) || ::graft::tree::holds_arrays<decltype(std::declval<const pytree_type&>().f)>
#define GRAFT_PT_OPAQUE_FIELD(f) || ::graft::tree::holds_opaque_static<decltype(std::declval<const pytree_type&>().f)>
#define GRAFT_PT_DESCRIBE_FIELD(f)                                      \
  out += #f "=";                                                        \
  ::graft::tree::Node<std::decay_t<decltype(t.f)>>::describe(t.f, out); \
  out += ',';

#define GRAFT_PYTREE(Type, ...)                                                  \
  template <>                                                                    \
  struct graft::tree::Node<Type> {                                               \
    static constexpr bool is_struct = true; /* jacobians: Array fields only */   \
    using pytree_type = Type;                                                    \
    static constexpr bool holds_arrays =                                         \
        false GRAFT_PT_FOR_EACH(GRAFT_PT_HOLDS_FIELD, __VA_ARGS__);              \
    static constexpr bool holds_opaque =                                         \
        false GRAFT_PT_FOR_EACH(GRAFT_PT_OPAQUE_FIELD, __VA_ARGS__);             \
    static void flatten(const Type& t, std::vector<::graft::Array>& out) {       \
      GRAFT_PT_FOR_EACH(GRAFT_PT_FLATTEN_FIELD, __VA_ARGS__)                     \
    }                                                                            \
    static Type unflatten(const Type& like, const ::graft::Array*& it) {         \
      Type r = like;                                                             \
      GRAFT_PT_FOR_EACH(GRAFT_PT_UNFLATTEN_FIELD, __VA_ARGS__)                   \
      return r;                                                                  \
    }                                                                            \
    static void shape(const Type& t, ::graft::tree::TreeShape& s) {              \
      GRAFT_PT_FOR_EACH(GRAFT_PT_SHAPE_FIELD, __VA_ARGS__)                       \
    }                                                                            \
    static void paths(const Type& t, const std::string& at, std::vector<std::string>& out) { \
      GRAFT_PT_FOR_EACH(GRAFT_PT_PATHS_FIELD, __VA_ARGS__)                       \
    }                                                                            \
    static void describe(const Type& t, std::string& out) {                      \
      out += #Type "{";                                                          \
      GRAFT_PT_FOR_EACH(GRAFT_PT_DESCRIBE_FIELD, __VA_ARGS__)                    \
      out += '}';                                                                \
    }                                                                            \
  }
