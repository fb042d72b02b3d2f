#include "codegen/cpu/fused_graph.h"
#include "ir/attr_access.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>

#include "codegen/cpu/compiler.h"
#include "codegen/cpu/emit.h"
#include "graft/errors.h"

namespace graft::codegen::cpu {

struct KernelIndex {
  struct Loaded {
    std::shared_ptr<const void> module;
    KernelFn fn;
  };
  std::unordered_map<std::string, Loaded> by_source;  // under the placeholder name
};

namespace {

// Kernels are emitted under this name, then renamed to their place in a module.
const std::string kPlaceholder = "gcg_kernel_self";

void rename(std::string& text, const std::string& to) {
  for (size_t at = text.find(kPlaceholder); at != std::string::npos; at = text.find(kPlaceholder, at + to.size()))
    text.replace(at, kPlaceholder.size(), to);
}

// The kernel of fusion node `node` (index i) under the placeholder name, or
// nullopt when the emitter refuses its body (the reason added to *refused).
std::optional<KernelSource> fusion_source(const ir::Node& node, size_t i, std::vector<std::string>* refused) {
  try {
    return emit_kernel_source(*ir::attr<ir::Graphs>(node, "body").at(0), kPlaceholder);
  } catch (const UnsupportedError& e) {
    if (refused) refused->push_back("node " + std::to_string(i) + ": " + e.what());
    return std::nullopt;
  }
}

// The kernel's `scalars`: the body's constants, then the kernel's sizes.
std::vector<int64_t> scalars_of(const ir::Graph& body, const KernelSource& k) {
  std::vector<int64_t> out = kernel_constants(body);
  out.insert(out.end(), k.sizes.begin(), k.sizes.end());
  return out;
}

// Calls a compiled kernel with a fusion node's buffers. The kernel holds its
// module: loaded while any copy of it lives.
interpreter::NodeKernel bind_kernel(std::shared_ptr<const void> module, KernelFn fn, std::vector<int64_t> scalars,
                                    int64_t n) {
  return [module = std::move(module), fn, scalars = std::move(scalars), n](const interpreter::KernelCall& call) {
    // Few operands: pointers on the stack for the common case.
    constexpr size_t kSmall = 16;
    const void* ins_small[kSmall];
    void* outs_small[kSmall];
    std::vector<const void*> ins_big;
    std::vector<void*> outs_big;
    const void** ins = ins_small;
    void** outs = outs_small;
    if (call.inputs.size() > kSmall) {
      ins_big.resize(call.inputs.size());
      ins = ins_big.data();
    }
    if (call.outputs.size() > kSmall) {
      outs_big.resize(call.outputs.size());
      outs = outs_big.data();
    }
    for (size_t j = 0; j < call.inputs.size(); ++j) ins[j] = call.inputs[j].data;
    for (size_t j = 0; j < call.outputs.size(); ++j) outs[j] = call.outputs[j].data;
    fn(ins, outs, scalars.data(), n);
  };
}

// Runs job(0) ... job(count - 1) on up to one thread per core; rethrows the
// first failure once all have finished.
template <class Job>
void run_parallel(size_t count, const Job& job) {
  const size_t threads = std::min<size_t>(count, std::max(1u, std::thread::hardware_concurrency()));
  if (threads <= 1) {
    for (size_t i = 0; i < count; ++i) job(i);
    return;
  }
  std::atomic<size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mu;
  auto worker = [&] {
    for (size_t i; (i = next++) < count;) {
      try {
        job(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(failure_mu);
        if (!failure) failure = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace

namespace {
std::optional<FusedGraphKernels> compile_fused(const ir::Graph& graph, bool only_if_cached);
}

FusedGraphKernels compile_fused_graph(const ir::Graph& graph) { return *compile_fused(graph, false); }

std::optional<FusedGraphKernels> compile_fused_graph_if_cached(const ir::Graph& graph) {
  return compile_fused(graph, true);
}

namespace {

std::optional<FusedGraphKernels> compile_fused(const ir::Graph& graph, bool only_if_cached) {
  FusedGraphKernels out;
  out.node_kernels.resize(graph.nodes().size());
  struct Use {
    size_t node;
    size_t kernel;  // index into `distinct`
    std::vector<int64_t> scalars;
    int64_t n;
  };
  std::vector<Use> uses;
  std::vector<std::string> distinct;  // kernel sources under the placeholder name
  std::unordered_map<std::string, size_t> index_of;
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    const ir::Node& node = graph.nodes()[i];
    if (node.op != ir::Op::fusion) continue;
    const ir::Graph& body = *ir::attr<ir::Graphs>(node, "body").at(0);
    std::optional<KernelSource> source = fusion_source(node, i, &out.refused);
    if (!source) continue;  // a body of another form: the interpreter runs it
    std::vector<int64_t> scalars = scalars_of(body, *source);
    auto [it, fresh] = index_of.emplace(std::move(source->text), distinct.size());
    if (fresh) distinct.push_back(it->first);
    uses.push_back({i, it->second, std::move(scalars), kernel_elements(body)});
  }
  if (uses.empty()) return out;

  // Module m holds distinct kernels [m * K, (m + 1) * K) as graft_kernel_0, 1, ...
  // (named by position in the module, so equal kernels give equal modules).
  const size_t K = kKernelsPerModule, modules = (distinct.size() + K - 1) / K;
  std::vector<std::string> sources(modules);
  std::vector<std::vector<std::string>> symbols(modules);
  for (size_t k = 0; k < distinct.size(); ++k) {
    std::string symbol = "graft_kernel_" + std::to_string(k % K);
    std::string text = distinct[k];
    rename(text, symbol);
    sources[k / K] += text;
    symbols[k / K].push_back(symbol);
  }
  if (only_if_cached) {
    for (const std::string& s : sources)
      if (!module_cached(s)) return std::nullopt;
  } else {
    record_graph_modules(graph.structural_hash(), sources);
  }
  std::vector<LoadedKernels> loaded(modules);
  run_parallel(modules, [&](size_t m) { loaded[m] = load_kernels(sources[m], symbols[m]); });

  auto index = std::make_shared<KernelIndex>();
  for (size_t k = 0; k < distinct.size(); ++k)
    index->by_source.emplace(distinct[k], KernelIndex::Loaded{loaded[k / K].module, loaded[k / K].fns[k % K]});
  out.index = std::move(index);
  for (Use& use : uses) {
    const LoadedKernels& k = loaded[use.kernel / K];
    out.node_kernels[use.node] = bind_kernel(k.module, k.fns[use.kernel % K], std::move(use.scalars), use.n);
  }
  for (size_t m = 0; m < modules; ++m) {
    if (modules > 1) out.source += "// ==== module " + std::to_string(m) + " of " + std::to_string(modules) + "\n";
    out.source += sources[m];
  }
  out.compiled = static_cast<int64_t>(uses.size());
  out.distinct = static_cast<int64_t>(distinct.size());
  out.modules = static_cast<int64_t>(modules);
  return out;
}

}  // namespace

FusedGraphKernels rebind_fused_graph(const ir::Graph& graph, const FusedGraphKernels& loaded,
                                     const std::vector<std::optional<KernelSource>>* generic) {
  FusedGraphKernels out;
  out.node_kernels.resize(graph.nodes().size());
  out.index = loaded.index;
  out.modules = loaded.modules;
  out.source = loaded.source;
  std::set<std::string> seen;
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    const ir::Node& node = graph.nodes()[i];
    if (node.op != ir::Op::fusion) continue;
    const ir::Graph& body = *ir::attr<ir::Graphs>(node, "body").at(0);
    std::optional<KernelSource> source = fusion_source(node, i, &out.refused);
    if (!source) continue;
    std::string text = source->text;
    std::vector<int64_t> scalars = scalars_of(body, *source);
    const KernelIndex::Loaded* found = nullptr;
    auto find = [&](const std::string& source) {
      if (loaded.index)
        if (auto it = loaded.index->by_source.find(source); it != loaded.index->by_source.end()) found = &it->second;
    };
    find(text);
    if (!found && generic && i < generic->size() && (*generic)[i]) {
      find((*generic)[i]->text);
      if (found) {
        text = (*generic)[i]->text;
        scalars = scalars_of(body, *(*generic)[i]);
      }
    }
    if (!found) {
      out.refused.push_back("node " + std::to_string(i) +
                            ": its generated code at this call's sizes differs from the compiled module's "
                            "(an axis of size 1 dropped, or another loop chosen)");
      ++out.differing;
      continue;
    }
    out.node_kernels[i] = bind_kernel(found->module, found->fn, std::move(scalars), kernel_elements(body));
    ++out.compiled;
    seen.insert(text);
  }
  out.distinct = static_cast<int64_t>(seen.size());
  return out;
}

std::vector<std::optional<KernelSource>> size_generic_sources(const std::vector<ir::GraphPtr>& samples) {
  std::vector<std::optional<KernelSource>> out;
  if (samples.empty()) return out;
  const ir::Graph& first = *samples[0];
  out.resize(first.nodes().size());
  for (size_t i = 0; i < first.nodes().size(); ++i) {
    if (first.nodes()[i].op != ir::Op::fusion) continue;
    std::optional<KernelSource> k = fusion_source(first.nodes()[i], i, nullptr);
    bool same = k.has_value();  // else the interpreter runs it at every size
    for (size_t s = 1; s < samples.size() && same; ++s) {
      const ir::Graph& g = *samples[s];
      if (i >= g.nodes().size() || g.nodes()[i].op != ir::Op::fusion) {
        same = false;
        break;
      }
      std::optional<KernelSource> other = fusion_source(g.nodes()[i], i, nullptr);
      same = other && other->text == k->text && other->sizes == k->sizes;
    }
    if (same) out[i] = std::move(k);
  }
  return out;
}

}  // namespace graft::codegen::cpu
