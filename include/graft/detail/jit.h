// The machinery behind graft/jit.h: the executable, tracing and cache keys,
// and running a compiled graph.
// Not part of the API: names here may change.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "graft/array.h"
#include "graft/autodiff.h"
#include "graft/detail/source_location.h"
#include "graft/graph.h"
#include "graft/graph_cache.h"
#include "graft/make_graph.h"
#include "graft/tree.h"

namespace graft {

namespace detail {

struct Executable;  // api/jit.cpp

bool jit_disabled();
bool tracing();
// The executable of a traced graph for these options (its text, analyses, run).
std::shared_ptr<const Executable> compile_graph(const Graph& g, const JitOptions& options,
                                                const std::vector<bool>& donated);
std::vector<Array> run_executable(const Executable& exe, const std::vector<Array>& leaves,
                                  const std::vector<bool>& donated, const JitOptions& options);
// With Ref arguments (graft/ref.h) at graph inputs ref_inputs, whose final
// values are the graph's last outputs: run_with_refs writes them into the
// Refs' own buffers (in place when the plan allows, else by a copy) and
// returns the other outputs.
std::shared_ptr<const Executable> compile_with_refs(const Graph& g, const JitOptions& options,
                                                    std::vector<bool> donated, const std::vector<size_t>& ref_inputs);
std::vector<Array> run_with_refs(const Executable& exe, std::vector<Array> leaves, std::vector<bool> donated,
                                 const JitOptions& options);
std::string executable_text(const Executable& exe);

// A function traced for jit, whose arguments may hold Refs and which may
// use eager Refs it closes over: the graph's outputs are the result's
// leaves, then each Ref argument's final value, then each closed-over Ref's;
// a closed-over Ref is an input after the arguments' leaves (found by a
// first trace, bound in a second). A function returning void has an empty result.
template <class Out>
struct TracedForJit {
  Graph graph;
  Out out;
  std::vector<size_t> ref_inputs;                 // the graph input of each Ref, in output order
  std::vector<std::shared_ptr<RefState>> closed;  // the closed-over Refs (their inputs come last)
};
// What a jitted function caches per signature. At namespace scope (as
// JitMisses), so jitted functions with one result type share its
// instantiations rather than each making its own.
template <class Out>
struct JitEntry {
  std::shared_ptr<const Executable> exe;
  Out out_like;
  std::vector<bool> donated;
  std::vector<std::shared_ptr<RefState>> closed;  // closed-over Refs, passed after the arguments
};
// The arguments of a jitted function's previous cache miss, for the log.
struct JitMisses {
  std::mutex mutex;
  std::vector<std::string> structures;
  int static_retraces = 0;  // misses where only numbers, enums or strings changed
  bool warned = false;
};

// The values of closed-over Refs, passed after the arguments' leaves.
std::vector<Array> closed_ref_leaves(const std::vector<std::shared_ptr<RefState>>& closed);

template <class F, class... Args>
auto trace_for_jit(const F& f, const Args&... args) {
  using R = decltype(f(args...));
  using Out = std::conditional_t<std::is_void_v<R>, std::tuple<>, std::decay_t<R>>;
  return trace_finding_refs([&](const RefUse& refs) {
    TraceSession session;
    session.carry_refs();
    std::tuple<Args...> traced{abstract_like(session, args)...};
    session.bind_refs(refs.bound);
    Out out = [&]() -> Out {
      if constexpr (std::is_void_v<R>) {
        std::apply(f, traced);
        return Out{};
      } else {
        return Out(std::apply(f, traced));
      }
    }();
    std::vector<Array> outs = tree::leaves(out);
    for (Array& a : session.ref_finals()) outs.push_back(a);
    for (Array& a : session.bound_finals()) outs.push_back(a);
    std::vector<size_t> ref_inputs = session.ref_input_positions();  // (finish hands the graph over)
    for (size_t p : session.bound_input_positions()) ref_inputs.push_back(p);
    if (refs.touched) *refs.touched = session.touched_refs();
    Graph g = session.finish(outs);
    return TracedForJit<Out>{g, out, std::move(ref_inputs), refs.bound};
  });
}
// Shape-polymorphic jit (api/jit_polymorphic.cpp): JitOptions::polymorphic_shapes read
// against the first call's leaves, and the sizes f is traced at.
struct PolymorphicSamples;
std::shared_ptr<const PolymorphicSamples> polymorphic_samples(const std::vector<std::string>& specs,
                                                              const std::vector<Array>& leaves);
size_t polymorphic_sample_count(const PolymorphicSamples& samples);
std::vector<Shape> polymorphic_sample_shapes(const PolymorphicSamples& samples, size_t point);
// The executable of the traces at every sample point, in order.
// Ref arguments at leaves `ref_inputs`, as compile_with_refs.
std::shared_ptr<const Executable> compile_polymorphic(const PolymorphicSamples& samples,
                                                      const std::vector<Graph>& traced, const JitOptions& options,
                                                      std::vector<bool> donated, const std::vector<size_t>& ref_inputs);
// A polymorphic executable's trace at its first sample, knowing its symbolic dimensions.
Graph polymorphic_traced_graph(const Executable& exe);
// Whether f's program at these leaves' sizes is still to be checked against the polymorphic
// executable's (f is traced once more at each new size: C++ cannot hand f symbolic sizes).
bool polymorphic_needs_check(const Executable& exe, const std::vector<Array>& leaves);
// Checks f's trace at these leaves' sizes; where it differs, they run an executable of their own.
void polymorphic_check(const Executable& exe, const std::vector<Array>& leaves, const Graph& traced);
// While alive, the inputs of this thread's outermost traces take these shapes, in leaf order.
class TraceInputShapes {
 public:
  explicit TraceInputShapes(std::vector<Shape> shapes);
  ~TraceInputShapes();
  TraceInputShapes(const TraceInputShapes&) = delete;
  TraceInputShapes& operator=(const TraceInputShapes&) = delete;
};
// While alive, structure descriptions on this thread give Arrays by dtype and rank only.
class ShapelessStructures {
 public:
  ShapelessStructures();
  ~ShapelessStructures();
  ShapelessStructures(const ShapelessStructures&) = delete;
  ShapelessStructures& operator=(const ShapelessStructures&) = delete;
};
CostAnalysis executable_cost(const Executable& exe);
MemoryAnalysis executable_memory(const Executable& exe);
// Why a call missed the cache: which arguments' structures changed, and how.
std::string cache_miss_reason(const std::vector<std::string>& previous, const std::vector<std::string>& now);
// GRAFT_LOG_COMPILES: says why the cache missed (which argument changed, and how).
void log_cache_miss(const std::string& name, const std::vector<std::string>& previous,
                    const std::vector<std::string>& now, size_t entries);
void log_compile(const std::string& name, double trace_ms, double compile_ms);
// Counts a retrace caused only by changed static arguments (is_static: per
// argument, no Array in it) in *count; past a few, warns once (*warned) on
// stderr, naming the argument, its values and the jitted function's line.
void note_static_retrace(const std::vector<std::string>& previous, const std::vector<std::string>& now,
                         const std::vector<bool>& is_static, int* count, bool* warned,
                         const std::source_location& site);
double now_ms();

// The leaves of the donated arguments flagged, in leaf order.
template <class... Args>
std::vector<bool> donated_leaves(const std::vector<int>& argnums, const Args&... args) {
  std::vector<bool> flags;
  int index = 0;
  auto add = [&](const auto& a) {
    bool donate = false;
    for (int k : argnums) donate = donate || k == index;
    flags.resize(flags.size() + tree::leaves(a).size(), donate);
    ++index;
  };
  (add(args), ...);
  return flags;
}

template <class... Args>
std::vector<std::string> argument_structures(const Args&... args) {
  return {tree::structure(args)...};
}

}  // namespace detail

namespace detail {
// Whether jit can cache on an argument of type T: every static value in it a
// number, enum or string. An unregistered struct (or a pointer) cannot be
// compared, so each call would trace anew: a compile-time error naming T.
template <class T>
constexpr bool cacheable_argument() {
  static_assert(!tree::holds_opaque_static<T>,
                "graft: jit is called with an argument of type T (see the instantiation above) holding a value "
                "that is neither an Array nor a number, enum or string (a struct not registered with "
                "GRAFT_PYTREE, a pointer): jit could not cache on it and would trace at every call. Register the "
                "struct (GRAFT_PYTREE(Type, field1, ...)), or capture the value in the function instead.");
  return !tree::holds_opaque_static<T>;
}
}  // namespace detail

}  // namespace graft
