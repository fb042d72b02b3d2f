// Pytrees: nested containers whose leaves are Arrays. Containers are
// std::vector, std::array, std::tuple, std::pair and std::map<std::string, T>;
// other values (numbers, strings, enums) are static leaves: they belong to
// the structure, never to the traced data.
#pragma once

#include <array>
#include <map>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "graft/array.h"

namespace graft::tree {

// Node<T> says how to take T apart and put it back together; specialise it
// (or use GRAFT_PYTREE, coming with the pytree issue) for your own types.
template <class T, class Enable = void>
struct Node {
  // Static leaf: contributes no Arrays.
  static void flatten(const T&, std::vector<Array>&) {}
  static T unflatten(const T& like, const Array*&) { return like; }
};

template <>
struct Node<Array> {
  static void flatten(const Array& a, std::vector<Array>& out) { out.push_back(a); }
  static Array unflatten(const Array&, const Array*& it) { return *it++; }
};

template <class T>
struct Node<std::vector<T>> {
  static void flatten(const std::vector<T>& v, std::vector<Array>& out) {
    for (const T& x : v) Node<T>::flatten(x, out);
  }
  static std::vector<T> unflatten(const std::vector<T>& like, const Array*& it) {
    std::vector<T> v;
    v.reserve(like.size());
    for (const T& x : like) v.push_back(Node<T>::unflatten(x, it));
    return v;
  }
};

template <class T, size_t N>
struct Node<std::array<T, N>> {
  static void flatten(const std::array<T, N>& v, std::vector<Array>& out) {
    for (const T& x : v) Node<T>::flatten(x, out);
  }
  static std::array<T, N> unflatten(const std::array<T, N>& like, const Array*& it) {
    std::array<T, N> v = like;
    for (size_t i = 0; i < N; ++i) v[i] = Node<T>::unflatten(like[i], it);
    return v;
  }
};

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
};

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
  const Array* it = values.data();
  return Node<T>::unflatten(like, it);
}

}  // namespace graft::tree
