// Host callbacks (jax.pure_callback, jax.experimental.io_callback,
// jax.debug): calling plain C++ from inside transformed code. The function
// runs on the host on concrete Arrays whenever the program runs: right away
// in eager code, once per call of a jitted function (on every backend; CUDA
// copies the operands to the host and the results back), per step of a
// scan or while_loop, per replica under pmap (from the replicas' threads at
// once: the function must be thread-safe), and under vmap per its
// VmapMethod. A callback has no derivative: differentiating through one is
// an UnsupportedError unless it is wrapped in custom_jvp or custom_vjp.
//
// On the CPU the function's arguments view graft's own buffers (no copy);
// they are valid during the call (an Array the function keeps is copied out
// when it returns). The function may return its results (copied into
// graft's buffers), or take a last parameter `Result& out` and write into
// graft's output buffers through writable_data (no copy at all).
//
// An exception the function throws reaches the caller as a graft::Error
// naming the callback, the user's line and the exception's message.
#pragma once

#include <array>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "graft/array.h"
#include "graft/detail/autodiff.h"
#include "graft/detail/source_location.h"
#include "graft/tree.h"
#include "graft/types.h"

namespace graft {

// The shape and dtype of one result of a callback (jax.ShapeDtypeStruct).
// `loc` records where it was written, the callback's line in messages.
struct ShapeDtype {
  Shape shape;
  DType dtype;
  std::source_location loc = std::source_location::current();
};

// How vmap runs a pure_callback: sequential calls it once per example (a
// scan); expand_dims calls it once on the batch, batched arguments with the
// batch on axis 0 and the others with a size-1 axis 0; broadcast_all calls
// it once with every argument broadcast to the batch. With the last two
// the function must return results with the batch on axis 0.
enum class VmapMethod { sequential, expand_dims, broadcast_all };

// The tag of an io_callback that keeps program order with every other
// ordered one, also under vmap (graft runs it example by example).
struct Ordered {};
inline constexpr Ordered ordered{};

// f(args...) on the host, for a function without side effects: the
// compiler may drop it when its results are unused, merge two calls with
// equal arguments, and vmap calls it per `method`. result_shape_dtypes is a
// ShapeDtype, or a std::vector, std::array, std::tuple, std::pair or
// std::map<std::string, ...> of them; the result has that structure with
// Arrays in their place. f returns a tree with as many Array leaves, of
// those shapes and dtypes (a ShapeError or DTypeError names the callback
// otherwise), or returns void and fills its last parameter `Result& out`.
template <class F, class Spec, class... Args>
auto pure_callback(F f, const Spec& result_shape_dtypes, VmapMethod method, const Args&... args);
template <class F, class Spec, class... Args>
auto pure_callback(F f, const Spec& result_shape_dtypes, const Args&... args);

// f(args...) on the host, for a function with side effects: it runs
// exactly once per call of the program (never dropped, merged or
// constant-folded), in program order among other io_callbacks; vmap runs it
// once per example. Results as pure_callback's (std::tuple<>{} for none).
template <class F, class Spec, class... Args>
auto io_callback(F f, const Spec& result_shape_dtypes, Ordered, const Args&... args);
template <class F, class Spec, class... Args>
auto io_callback(F f, const Spec& result_shape_dtypes, const Args&... args);

// The elements of a callback's output Array (the `out` parameter above), to
// fill in place; a DTypeError if T is not its dtype's C++ type (uint16_t
// holds f16 and bf16 bits, std::complex c64 and c128), an Error for any
// other Array.
template <class T>
T* writable_data(Array& out);

namespace debug {

// A format string and the user's line it was written on.
struct FormatAt {
  FormatAt(const char* text, std::source_location loc = std::source_location::current()) : text(text), loc(loc) {}
  FormatAt(std::string text, std::source_location loc = std::source_location::current())
      : text(std::move(text)), loc(loc) {}
  std::string text;
  std::source_location loc;
};

// Prints `format` to standard output with each "{}" replaced by the next
// argument's values (an Array as graft prints one; a tree of them as a list
// of its leaves; "{{" and "}}" are braces), when the program runs: inside
// jit on every call, under vmap once per example. An Error if the count of
// "{}" differs from the count of arguments.
template <class... Args>
void print(FormatAt format, const Args&... args);

// f(args...) on the host for its side effects (jax.debug.callback), as an
// unordered io_callback with no results; under vmap once per example.
template <class F, class... Args>
void callback(F f, const Args&... args);

}  // namespace debug

// ---- the machinery behind the declarations above (not part of the API)
namespace detail {

enum class CallbackKind { pure, io, io_ordered };
// The callable, type-erased: either returns its results' leaves, or writes
// into the output views it is given.
using CallbackReturning = std::function<std::vector<Array>(const std::vector<Array>& args)>;
using CallbackWriting = std::function<void(const std::vector<Array>& args, const std::vector<Array>& outs)>;

// Records the callback (or, outside every trace, runs it now): api/callback.cpp.
std::vector<Array> callback_bind(CallbackKind kind, VmapMethod method, CallbackReturning returning,
                                 CallbackWriting writing, const std::vector<ShapeDtype>& results,
                                 const std::vector<Array>& args, const std::source_location& loc,
                                 const std::string& what);
// The C++ type's dtype (T must be one writable_data accepts).
template <class T>
constexpr DType callback_dtype() {
  if constexpr (std::is_same_v<T, bool>)
    return DType::bool_;
  else if constexpr (std::is_same_v<T, float>)
    return DType::f32;
  else if constexpr (std::is_same_v<T, double>)
    return DType::f64;
  else if constexpr (std::is_same_v<T, int8_t>)
    return DType::i8;
  else if constexpr (std::is_same_v<T, int16_t>)
    return DType::i16;
  else if constexpr (std::is_same_v<T, int32_t>)
    return DType::i32;
  else if constexpr (std::is_same_v<T, int64_t>)
    return DType::i64;
  else if constexpr (std::is_same_v<T, uint8_t>)
    return DType::u8;
  else if constexpr (std::is_same_v<T, uint16_t>)
    return DType::u16;
  else if constexpr (std::is_same_v<T, uint32_t>)
    return DType::u32;
  else if constexpr (std::is_same_v<T, uint64_t>)
    return DType::u64;
  else if constexpr (std::is_same_v<T, std::complex<float>>)
    return DType::c64;
  else if constexpr (std::is_same_v<T, std::complex<double>>)
    return DType::c128;
  else
    static_assert(sizeof(T) == 0,
                  "graft::writable_data<T>: T must be bool, float, double, a fixed-width integer or std::complex");
}
void* writable_pointer(Array& out, DType want);
std::string format_debug(const std::string& format, const std::vector<std::string>& values,
                         const std::source_location& loc);
void debug_write(const std::string& line);  // the line and a newline on std::cout, flushed
std::string debug_value(const std::vector<Array>& leaves, bool is_single_array);

// The result tree a spec describes, with empty Arrays (a `like` for tree::unflatten).
inline Array spec_like(const ShapeDtype&) { return Array(); }
template <class T>
auto spec_like(const std::vector<T>& v);
template <class T, size_t N>
auto spec_like(const std::array<T, N>& v);
template <class... Ts>
auto spec_like(const std::tuple<Ts...>& t);
template <class A, class B>
auto spec_like(const std::pair<A, B>& p);
template <class T>
auto spec_like(const std::map<std::string, T>& m);

template <class T>
auto spec_like(const std::vector<T>& v) {
  std::vector<decltype(spec_like(std::declval<const T&>()))> r;
  for (const T& x : v) r.push_back(spec_like(x));
  return r;
}
template <class T, size_t N>
auto spec_like(const std::array<T, N>& v) {
  std::array<decltype(spec_like(std::declval<const T&>())), N> r;
  for (size_t i = 0; i < N; ++i) r[i] = spec_like(v[i]);
  return r;
}
template <class... Ts>
auto spec_like(const std::tuple<Ts...>& t) {
  return std::apply([](const auto&... x) { return std::tuple<decltype(spec_like(x))...>{spec_like(x)...}; }, t);
}
template <class A, class B>
auto spec_like(const std::pair<A, B>& p) {
  return std::make_pair(spec_like(p.first), spec_like(p.second));
}
template <class T>
auto spec_like(const std::map<std::string, T>& m) {
  std::map<std::string, decltype(spec_like(std::declval<const T&>()))> r;
  for (const auto& [k, x] : m) r.emplace(k, spec_like(x));
  return r;
}

// The spec's ShapeDtypes in leaf order (std::map by key, as tree::leaves).
inline void spec_types(const ShapeDtype& s, std::vector<ShapeDtype>& out) { out.push_back(s); }
template <class T>
void spec_types(const std::vector<T>& v, std::vector<ShapeDtype>& out);
template <class T, size_t N>
void spec_types(const std::array<T, N>& v, std::vector<ShapeDtype>& out);
template <class... Ts>
void spec_types(const std::tuple<Ts...>& t, std::vector<ShapeDtype>& out);
template <class A, class B>
void spec_types(const std::pair<A, B>& p, std::vector<ShapeDtype>& out);
template <class T>
void spec_types(const std::map<std::string, T>& m, std::vector<ShapeDtype>& out);

template <class T>
void spec_types(const std::vector<T>& v, std::vector<ShapeDtype>& out) {
  for (const T& x : v) spec_types(x, out);
}
template <class T, size_t N>
void spec_types(const std::array<T, N>& v, std::vector<ShapeDtype>& out) {
  for (const T& x : v) spec_types(x, out);
}
template <class... Ts>
void spec_types(const std::tuple<Ts...>& t, std::vector<ShapeDtype>& out) {
  std::apply([&](const auto&... x) { (spec_types(x, out), ...); }, t);
}
template <class A, class B>
void spec_types(const std::pair<A, B>& p, std::vector<ShapeDtype>& out) {
  spec_types(p.first, out);
  spec_types(p.second, out);
}
template <class T>
void spec_types(const std::map<std::string, T>& m, std::vector<ShapeDtype>& out) {
  for (const auto& [k, x] : m) spec_types(x, out);
}

// The arguments' trees rebuilt around new leaves (the views a call gets).
template <class Tuple>
Tuple rebuild_args(const Tuple& like, const std::vector<Array>& leaves) {
  size_t pos = 0;
  auto take = [&](const auto& l) {
    size_t n = tree::leaves(l).size();
    auto t = tree::unflatten(l, std::vector<Array>(leaves.begin() + static_cast<std::ptrdiff_t>(pos),
                                                   leaves.begin() + static_cast<std::ptrdiff_t>(pos + n)));
    pos += n;
    return t;
  };
  return std::apply([&](const auto&... l) { return Tuple{take(l)...}; }, like);
}

// Every leaf of t replaced by an empty Array: the structure, holding no buffer or tracer.
template <class T>
T blank_tree(const T& t) {
  return tree::unflatten(t, std::vector<Array>(tree::leaves(t).size()));
}

// Whether f(args..., Result& out) is the writing form: callable so, returning void.
template <class F, class Result, class... Args>
constexpr bool writes_results() {
  if constexpr (std::is_invocable_v<F&, const Args&..., Result&>)
    return std::is_void_v<std::invoke_result_t<F&, const Args&..., Result&>>;
  else
    return false;
}

template <class F, class Spec, class... Args>
auto callback_call(CallbackKind kind, VmapMethod method, F f, const Spec& spec, const std::string& what,
                   const Args&... args) {
  using Result = decltype(spec_like(spec));
  Result like = spec_like(spec);
  std::vector<ShapeDtype> types;
  spec_types(spec, types);
  std::source_location loc = types.empty() ? std::source_location::current() : types.front().loc;
  using ArgTuple = std::tuple<Args...>;
  ArgTuple arg_like{blank_tree(args)...};
  CallbackReturning returning;
  CallbackWriting writing;
  if constexpr (writes_results<F, Result, Args...>()) {
    writing = [f, arg_like, like](const std::vector<Array>& in, const std::vector<Array>& outs) mutable {
      ArgTuple a = rebuild_args(arg_like, in);
      Result out = tree::unflatten(like, outs);
      std::apply([&](const auto&... x) { f(x..., out); }, a);
    };
  } else {
    static_assert(std::is_invocable_v<F&, const Args&...>,
                  "graft: a callback must be callable with the arguments given after result_shape_dtypes (or "
                  "with them and a last `Result& out` parameter, returning void)");
    returning = [f, arg_like](const std::vector<Array>& in) mutable -> std::vector<Array> {
      ArgTuple a = rebuild_args(arg_like, in);
      if constexpr (std::is_void_v<std::invoke_result_t<F&, const Args&...>>) {
        std::apply(f, a);
        return {};
      } else {
        return tree::leaves(std::apply(f, a));
      }
    };
  }
  std::vector<Array> outs =
      callback_bind(kind, method, std::move(returning), std::move(writing), types, all_leaves(args...), loc, what);
  return tree::unflatten(like, outs);
}

// f(args...) as an unordered io_callback with no results (debug::print, debug::callback).
template <class F, class... Args>
void debug_call(F f, const std::source_location& loc, const char* what, const Args&... args) {
  std::vector<ShapeDtype> none;
  callback_bind(
      CallbackKind::io, VmapMethod::sequential,
      [f, like = std::tuple<Args...>{blank_tree(args)...}](const std::vector<Array>& in) mutable {
        std::apply(f, rebuild_args(like, in));
        return std::vector<Array>{};
      },
      {}, none, all_leaves(args...), loc, what);
}

}  // namespace detail

template <class F, class Spec, class... Args>
auto pure_callback(F f, const Spec& result_shape_dtypes, VmapMethod method, const Args&... args) {
  return detail::callback_call(detail::CallbackKind::pure, method, std::move(f), result_shape_dtypes, "pure_callback",
                               args...);
}
template <class F, class Spec, class... Args>
auto pure_callback(F f, const Spec& result_shape_dtypes, const Args&... args) {
  return detail::callback_call(detail::CallbackKind::pure, VmapMethod::sequential, std::move(f), result_shape_dtypes,
                               "pure_callback", args...);
}
template <class F, class Spec, class... Args>
auto io_callback(F f, const Spec& result_shape_dtypes, Ordered, const Args&... args) {
  return detail::callback_call(detail::CallbackKind::io_ordered, VmapMethod::sequential, std::move(f),
                               result_shape_dtypes, "io_callback", args...);
}
template <class F, class Spec, class... Args>
auto io_callback(F f, const Spec& result_shape_dtypes, const Args&... args) {
  return detail::callback_call(detail::CallbackKind::io, VmapMethod::sequential, std::move(f), result_shape_dtypes,
                               "io_callback", args...);
}

template <class T>
T* writable_data(Array& out) {
  return static_cast<T*>(detail::writable_pointer(out, detail::callback_dtype<T>()));
}

namespace debug {

template <class... Args>
void print(FormatAt format, const Args&... args) {
  std::string text = format.text;
  std::source_location loc = format.loc;
  // The format is checked now, where the user wrote it, not when the program runs.
  detail::format_debug(text, std::vector<std::string>(sizeof...(Args)), loc);
  auto f = [text, loc](const Args&... a) {
    std::vector<std::string> values{
        detail::debug_value(tree::leaves(a), std::is_same_v<std::decay_t<decltype(a)>, Array>)...};
    detail::debug_write(detail::format_debug(text, values, loc));
  };
  detail::debug_call(std::move(f), loc, "debug.print", args...);
}

template <class F, class... Args>
void callback(F f, const Args&... args) {
  detail::debug_call(std::move(f), std::source_location::current(), "debug.callback", args...);
}

}  // namespace debug

}  // namespace graft
