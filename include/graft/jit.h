// jit: f traced once per abstract signature of its arguments (leaf shapes
// and dtypes, static values, pytree structure), simplified and compiled into
// an executable that later calls replay. Inside another trace a jitted
// function is inlined; under a disable_jit guard it runs op by op.
#pragma once

#include <any>
#include <functional>
#include <memory>
#include <mutex>
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

enum class Backend { interpreter, cpu, cuda, automatic };

struct JitOptions {
  std::vector<int> donate_argnums = {};  // arguments whose buffers outputs may take over
  Backend backend = Backend::automatic;
  bool donation_must_apply = false;      // a donation that cannot be used is an error, not a warning
  // Backend::cpu: wait for the C++ compiler before the first call returns. By
  // default (tiered execution) calls run the fused graph on the interpreter
  // while the module compiles in the background, and use it once it is loaded.
  bool wait_for_compile = false;
  // Shape-polymorphic jit: one shape per argument leaf in JAX's syntax ("(b, 784)", "(b,)",
  // "(2*b, _)": '_' keeps the first call's size), plus constraints ("b >= 8", "t <= 2*b").
  // One executable serves every size of the symbols; each symbol is at least 1.
  std::vector<std::string> polymorphic_shapes = {};
};

struct CostAnalysis {
  double flops = 0;           // arithmetic operations (a multiply-add counts 2)
  double bytes_accessed = 0;  // bytes read and written by the executable's kernels
};

struct MemoryAnalysis {
  int64_t argument_bytes = 0;
  int64_t output_bytes = 0;
  int64_t temp_bytes = 0;   // the peak of intermediate buffers alive at once
  int64_t alias_bytes = 0;  // output bytes written into donated arguments' buffers
};

// While alive, jitted functions on this thread run their f op by op (for debugging).
class disable_jit {
 public:
  disable_jit();
  ~disable_jit();
  disable_jit(const disable_jit&) = delete;
  disable_jit& operator=(const disable_jit&) = delete;
};

}  // namespace graft

#include "graft/detail/jit.h"

namespace graft {

// The executable of a lowered function, ready to run (jitted.lower(...).compile()).
template <class Out>
class Compiled {
 public:
  // polymorphic_trace: for a shape-polymorphic executable, f's trace at a
  // call's arguments (a std::function<Graph(const Args&...)>), so that the
  // first call at each new size checks f's program there as jit's calls do.
  Compiled(std::shared_ptr<const detail::Executable> exe, Out out_like, JitOptions options,
           std::vector<std::shared_ptr<detail::RefState>> closed = {}, std::any polymorphic_trace = {})
      : exe_(std::move(exe)),
        out_like_(std::move(out_like)),
        options_(std::move(options)),
        closed_(std::move(closed)),
        polymorphic_trace_(std::move(polymorphic_trace)) {}
  std::string as_text() const { return detail::executable_text(*exe_); }
  CostAnalysis cost_analysis() const { return detail::executable_cost(*exe_); }
  MemoryAnalysis memory_analysis() const { return detail::executable_memory(*exe_); }
  template <class... Args>
  Out operator()(const Args&... args) const {
    std::vector<Array> leaves = detail::all_leaves(args...);
    // Polymorphic, called with the argument types it was lowered with: the first call at each size checks f.
    using Trace = std::function<Graph(const std::decay_t<Args>&...)>;
    if (const Trace* trace = std::any_cast<Trace>(&polymorphic_trace_))
      if (detail::polymorphic_needs_check(*exe_, leaves)) detail::polymorphic_check(*exe_, leaves, (*trace)(args...));
    std::vector<bool> donated = detail::donated_leaves(options_.donate_argnums, args...);
    for (Array& a : detail::closed_ref_leaves(closed_)) {
      leaves.push_back(a);
      donated.push_back(false);
    }
    return tree::unflatten(out_like_, detail::run_with_refs(*exe_, leaves, donated, options_));
  }

 private:
  std::shared_ptr<const detail::Executable> exe_;
  Out out_like_;
  JitOptions options_;
  std::vector<std::shared_ptr<detail::RefState>> closed_;
  std::any polymorphic_trace_;
};

// A traced function before compilation (jitted.lower(...)).
template <class Out>
class Lowered {
 public:
  Lowered(Graph graph, Out out_like, JitOptions options, std::vector<bool> donated, std::vector<size_t> ref_inputs = {},
          std::vector<std::shared_ptr<detail::RefState>> closed = {},
          std::shared_ptr<const detail::Executable> polymorphic = nullptr, std::any polymorphic_trace = {})
      : graph_(std::move(graph)),
        out_like_(std::move(out_like)),
        options_(std::move(options)),
        donated_(std::move(donated)),
        ref_inputs_(std::move(ref_inputs)),
        closed_(std::move(closed)),
        polymorphic_(std::move(polymorphic)),
        polymorphic_trace_(std::move(polymorphic_trace)) {}
  const Graph& graph() const { return graph_; }
  std::string as_text() const { return graph_.to_text(); }
  // Ahead of time: returns once the executable is compiled (for Backend::cpu,
  // its module built and loaded), whatever options.wait_for_compile says.
  Compiled<Out> compile() const {
    if (polymorphic_) return Compiled<Out>(polymorphic_, out_like_, options_, {}, polymorphic_trace_);
    JitOptions waiting = options_;
    waiting.wait_for_compile = true;
    std::vector<bool> donated = donated_;
    donated.resize(donated_.size() + closed_.size(), false);
    return Compiled<Out>(detail::compile_with_refs(graph_, waiting, donated, ref_inputs_), out_like_, options_,
                         closed_);
  }

 private:
  Graph graph_;
  Out out_like_;
  JitOptions options_;
  std::vector<bool> donated_;
  std::vector<size_t> ref_inputs_;
  std::vector<std::shared_ptr<detail::RefState>> closed_;
  std::shared_ptr<const detail::Executable> polymorphic_;  // polymorphic_shapes: compiled already
  std::any polymorphic_trace_;                             // and f's trace at a call's arguments (Compiled)
};

template <class F>
class Jitted {
 public:
  Jitted(F f, JitOptions options, std::source_location site = std::source_location::current())
      : f_(std::move(f)),
        options_(std::move(options)),
        cache_(std::make_shared<detail::GraphCache>()),
        last_(std::make_shared<detail::JitMisses>()),
        site_(site) {}

  template <class... Args>
  auto operator()(const Args&... args) const {
    static_assert((detail::cacheable_argument<Args>() && ...));
    using R = decltype(f_(args...));
    // Inside a trace the jitted function is inlined; disabled, it runs op by op.
    if (detail::tracing() || detail::jit_disabled()) {
      if constexpr (std::is_void_v<R>)
        return f_(args...);
      else
        return std::decay_t<R>(f_(args...));
    }
    auto entry = find_or_compile(args...);
    std::vector<Array> leaves = detail::all_leaves(args...);
    // Polymorphic: the first call at each size checks that f builds the polymorphic program there.
    if (!options_.polymorphic_shapes.empty() && detail::polymorphic_needs_check(*entry->exe, leaves))
      detail::polymorphic_check(*entry->exe, leaves, detail::trace_for_jit(f_, args...).graph);
    std::vector<bool> donated = entry->donated;
    for (Array& a : detail::closed_ref_leaves(entry->closed)) {
      leaves.push_back(a);
      donated.push_back(false);
    }
    std::vector<Array> outs = detail::run_with_refs(*entry->exe, leaves, donated, options_);
    if constexpr (std::is_void_v<R>)
      return;
    else
      return tree::unflatten(entry->out_like, outs);
  }

  // The number of executables cached (one per abstract signature seen).
  size_t cache_size() const { return cache_->size(); }
  size_t trace_count() const { return cache_->traces(); }

  template <class... Args>
  auto lower(const Args&... args) const {
    using R = decltype(f_(args...));
    using Out = std::conditional_t<std::is_void_v<R>, std::tuple<>, std::decay_t<R>>;
    if (!options_.polymorphic_shapes.empty()) {  // traced at every sample size; compile() returns the executable
      JitOptions waiting = options_;             // ahead of time: compile() returns once the module is loaded
      waiting.wait_for_compile = true;
      auto [exe, first] = compile_polymorphic<Out>(waiting, args...);
      std::function<Graph(const std::decay_t<Args>&...)> trace = [f = f_](const std::decay_t<Args>&... a) {
        return detail::trace_for_jit(f, a...).graph;
      };
      return Lowered<Out>(detail::polymorphic_traced_graph(*exe), first.out, options_,
                          detail::donated_leaves(options_.donate_argnums, args...), {}, {}, exe, std::any(trace));
    }
    auto traced = detail::trace_for_jit(f_, args...);
    return Lowered<std::decay_t<decltype(traced.out)>>(traced.graph, traced.out, options_,
                                                       detail::donated_leaves(options_.donate_argnums, args...),
                                                       traced.ref_inputs, traced.closed);
  }

 private:
  template <class... Args>
  auto find_or_compile(const Args&... args) const {
    using R = decltype(f_(args...));
    using Out = std::conditional_t<std::is_void_v<R>, std::tuple<>, std::decay_t<R>>;
    if (!options_.polymorphic_shapes.empty()) return find_or_compile_polymorphic<Out>(args...);
    std::string key = detail::signature_key("jit", args...);
    if (!key.empty())
      if (auto hit = std::static_pointer_cast<const detail::JitEntry<Out>>(cache_->find(key))) return hit;
    {
      std::vector<std::string> now = detail::argument_structures(args...);
      std::lock_guard lock(last_->mutex);
      detail::log_cache_miss("jit", last_->structures, now, cache_->size());
      detail::note_static_retrace(last_->structures, now, {!tree::holds_arrays<Args>...}, &last_->static_retraces,
                                  &last_->warned, site_);
      last_->structures = std::move(now);
    }
    cache_->count_trace();
    double t0 = detail::now_ms();
    auto traced = detail::trace_for_jit(f_, args...);
    double t1 = detail::now_ms();
    std::vector<bool> donated = detail::donated_leaves(options_.donate_argnums, args...);
    std::vector<bool> all_donated = donated;  // closed-over Refs come after the arguments
    all_donated.resize(donated.size() + traced.closed.size(), false);
    auto entry = std::make_shared<const detail::JitEntry<Out>>(
        detail::JitEntry<Out>{detail::compile_with_refs(traced.graph, options_, all_donated, traced.ref_inputs),
                              traced.out, donated, traced.closed});
    detail::log_compile("jit", t1 - t0, detail::now_ms() - t1);
    if (!key.empty()) cache_->insert(key, entry);
    return entry;
  }

  // One entry for every size: f is traced at the sample sizes (ir/symbolic_graph.h), once.
  template <class Out, class... Args>
  std::shared_ptr<const detail::JitEntry<Out>> find_or_compile_polymorphic(const Args&... args) const {
    std::string key;
    {
      detail::ShapelessStructures shapeless;
      key = detail::signature_key("jit polymorphic", args...);
    }
    if (!key.empty())
      if (auto hit = std::static_pointer_cast<const detail::JitEntry<Out>>(cache_->find(key))) return hit;
    double t0 = detail::now_ms();
    auto [exe, first] = compile_polymorphic<Out>(options_, args...);
    std::vector<bool> donated = detail::donated_leaves(options_.donate_argnums, args...);
    auto entry = std::make_shared<const detail::JitEntry<Out>>(detail::JitEntry<Out>{exe, first.out, donated, {}});
    detail::log_compile("jit (polymorphic: traces and compile)", 0, detail::now_ms() - t0);
    if (!key.empty()) cache_->insert(key, entry);
    return entry;
  }

  // The polymorphic executable and the trace at the first sample size.
  template <class Out, class... Args>
  auto compile_polymorphic(const JitOptions& options, const Args&... args) const {
    const std::vector<Array> leaves = detail::all_leaves(args...);
    auto samples = detail::polymorphic_samples(options_.polymorphic_shapes, leaves);
    std::vector<Graph> graphs;
    std::optional<detail::TracedForJit<Out>> first;
    for (size_t p = 0; p < detail::polymorphic_sample_count(*samples); ++p) {
      detail::TraceInputShapes shapes(detail::polymorphic_sample_shapes(*samples, p));
      cache_->count_trace();
      auto traced = detail::trace_for_jit(f_, args...);
      if (!traced.closed.empty())
        throw UnsupportedError(
            "jit: polymorphic_shapes with closed-over Refs is not supported; pass the Ref as an "
            "argument");
      graphs.push_back(traced.graph);
      if (!first) first.emplace(std::move(traced));
    }
    std::vector<bool> donated = detail::donated_leaves(options_.donate_argnums, args...);
    return std::make_pair(detail::compile_polymorphic(*samples, graphs, options, donated, first->ref_inputs),
                          std::move(*first));
  }

  F f_;
  JitOptions options_;
  std::shared_ptr<detail::GraphCache> cache_;
  std::shared_ptr<detail::JitMisses> last_;
  std::source_location site_;
};

// jit(f, options): f compiled per abstract signature; see the top of this header.
template <class F>
Jitted<F> jit(F f, JitOptions options = {}, std::source_location site = std::source_location::current()) {
  return Jitted<F>(std::move(f), std::move(options), site);
}

}  // namespace graft
