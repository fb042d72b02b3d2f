// The non-template side of jit: compiling a traced graph (simplify, plan
// donation, analyse), running it, and the compile log.
#include "graft/jit.h"
#include "ir/attr_access.h"
#include "ir/cost.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <string_view>

#include "api/array_impl.h"
#include "api/dispatch.h"
#include "api/executable_info.h"
#include "api/jit_executable.h"
#include "api/jit_polymorphic.h"
#include "api/jit_tiers.h"
#include "codegen/cpu/background_compile.h"
#include "codegen/cpu/compiler.h"
#include "codegen/cuda/cuda_devices.h"
#include "codegen/cuda/driver.h"
#include "codegen/cuda/node_kernels.h"
#include "codegen/memory_plan.h"
#include "graft/errors.h"
#include "interpreter/constant_folding.h"
#include "interpreter/evaluate.h"
#include "interpreter/pmap_call.h"
#include "ir/dtype.h"
#include "ir/trace.h"
#include "runtime/cpu_share.h"
#include "runtime/device.h"
#include "transforms/fusion.h"
#include "transforms/fusion_recompute.h"
#include "transforms/inline_remat.h"
#include "transforms/simplify.h"

namespace graft {

namespace {

int& disabled_depth() {
  thread_local int depth = 0;
  return depth;
}

bool log_compiles() {
  static const bool on = [] {
    const char* v = std::getenv("GRAFT_LOG_COMPILES");
    return v && std::string(v) == "1";
  }();
  return on;
}

std::string describe_kernels(const codegen::cpu::FusedGraphKernels& k) {
  return std::to_string(k.compiled) + " fused kernels (" + std::to_string(k.distinct) + " distinct, " +
         std::to_string(k.modules) + (k.modules == 1 ? " module)" : " modules)");
}

struct AtomicTierCounts {
  std::atomic<int64_t> interpreted{0}, compiled{0};
};
AtomicTierCounts g_tier_counts;

int64_t bytes_of(const ir::ValueType& t) { return t.num_elements() * static_cast<int64_t>(ir::dtype_size(t.dtype)); }

}  // namespace

disable_jit::disable_jit() { ++disabled_depth(); }
disable_jit::~disable_jit() { --disabled_depth(); }

namespace detail {

bool jit_disabled() { return disabled_depth() > 0; }
bool tracing() { return ir::current_trace() != nullptr; }

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

namespace {

Backend resolve(Backend b) {
  switch (b) {
    case Backend::interpreter:
      return Backend::interpreter;
    case Backend::automatic:
      if (default_device().kind() == "cuda") return Backend::cuda;  // a real GPU, or GRAFT_PLATFORMS=cuda
      return codegen::cpu::cpu_compiler_available() ? Backend::cpu : Backend::interpreter;
    case Backend::cpu:
      if (!codegen::cpu::cpu_compiler_available())
        throw UnsupportedError("jit: Backend::cpu needs a C++ compiler (" + codegen::cpu::cpu_compiler_description() +
                               "); use Backend::interpreter or Backend::automatic");
      return Backend::cpu;
    case Backend::cuda: {
      std::string why;
      if (!codegen::cuda::cuda_available(&why) || codegen::cuda::cuda_devices().empty())
        throw UnsupportedError("jit: Backend::cuda needs a CUDA device: " + why +
                               " (GRAFT_CUDA_DRIVER=emulated runs the generated CUDA kernels on an emulated device "
                               "in host memory); use Backend::interpreter, cpu or automatic");
      return Backend::cuda;
    }
  }
  return Backend::interpreter;
}

CostAnalysis cost_of(const ir::Graph& g) {
  const ir::Cost c = ir::graph_cost(g);
  return CostAnalysis{.flops = c.flops, .bytes_accessed = c.bytes};
}

// Argument, output and aliased bytes (temp_bytes comes from the memory plan).
MemoryAnalysis memory_of(const ir::Graph& g, const std::vector<int64_t>& plan) {
  MemoryAnalysis m;
  for (ir::ValueId v : g.inputs()) m.argument_bytes += bytes_of(g.type(v));
  for (ir::ValueId v : g.outputs()) m.output_bytes += bytes_of(g.type(v));
  for (size_t i = 0; i < plan.size(); ++i)
    if (plan[i] >= 0) m.alias_bytes += bytes_of(g.type(g.inputs()[i]));
  return m;
}

// Bytes of the literal constants a graph (and its subgraphs) keeps.
int64_t constant_bytes(const ir::Graph& g) {
  int64_t total = 0;
  for (const ir::Node& n : g.nodes()) {
    for (const auto& [key, attr] : n.attrs.items()) {
      if (const auto* lit = std::get_if<ir::LiteralPtr>(&attr)) total += static_cast<int64_t>((*lit)->bytes.size());
      if (const auto* subs = std::get_if<ir::Graphs>(&attr))
        for (const ir::GraphPtr& sub : *subs) total += constant_bytes(*sub);
    }
  }
  return total;
}

// An executable is attributed to where its function begins: the first traced line.
const runtime::AllocationSite* executable_site(const ir::Graph& g) {
  for (const ir::Node& n : g.nodes())
    if (!n.loc.empty()) return runtime::intern_site("jit", "", n.loc.file, n.loc.function, n.loc.line);
  return runtime::intern_site("jit", "", "", "", 0);
}

}  // namespace

std::shared_ptr<const codegen::cpu::PendingKernels> start_cpu_compile(const ir::GraphPtr& graph, bool wait) {
  if (wait) {
    auto pending = codegen::cpu::compile_fused_graph_now(graph);
    if (log_compiles())
      std::fprintf(stderr, "graft: jit cpu module: %s compiled in %.2f s\n",
                   describe_kernels(*pending->ready()).c_str(), pending->seconds());
    return pending;
  }
  // Every module already on disk (an earlier run compiled them): load them now, so the first call runs compiled.
  if (auto cached = codegen::cpu::load_fused_graph_if_cached(graph)) {
    if (log_compiles())
      std::fprintf(stderr, "graft: jit cpu module: %s loaded from the cache in %.3f s\n",
                   describe_kernels(*cached->ready()).c_str(), cached->seconds());
    return cached;
  }
  if (log_compiles()) std::fprintf(stderr, "graft: jit cpu module: compiling in the background\n");
  return codegen::cpu::compile_fused_graph_in_background(graph, [](const codegen::cpu::PendingKernels& p) {
    if (const codegen::cpu::FusedGraphKernels* k = p.ready()) {
      if (log_compiles())
        std::fprintf(stderr, "graft: jit cpu module: %s loaded after %.2f s in the background\n",
                     describe_kernels(*k).c_str(), p.seconds());
    } else if (!codegen::cpu::process_exiting()) {  // at exit the compiler was killed: nothing to report
      std::fprintf(stderr, "graft: jit: the cpu module failed to compile; this executable keeps running on the "
                           "interpreter:\n%s\n", p.failure().c_str());
    }
  });
}

// pmap nodes' bodies compiled like any jit program, each run by every
// replica of the node on its own device. The replicas' devices are the
// host's (runtime::devices(); pmap's codegen column is HOST), so a cuda
// program compiles their body for the host: its kernels would be given host
// buffers.
std::vector<interpreter::NodeKernel> pmap_kernels(const ir::Graph& g, const JitOptions& options) {
  std::vector<interpreter::NodeKernel> kernels;
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const ir::Node& n = g.nodes()[i];
    if (n.op != ir::Op::pmap) continue;
    kernels.resize(g.nodes().size());
    Backend body_backend = resolve(options.backend);
    if (body_backend == Backend::cuda)
      body_backend = codegen::cpu::cpu_compiler_available() ? Backend::cpu : Backend::interpreter;
    const JitOptions body_options{.backend = body_backend, .wait_for_compile = options.wait_for_compile};
    std::shared_ptr<const Executable> body =
        compile_graph(Graph(ir::attr<ir::Graphs>(n, "body").at(0)), body_options, {});
    kernels[i] = [body](const interpreter::KernelCall& call) {
      interpreter::run_pmap_call(call, [&body](const std::vector<runtime::BufferPtr>& inputs) {
        const ir::Graph& bg = *body->graph;
        std::vector<Array> args;
        for (size_t k = 0; k < inputs.size(); ++k) args.emplace_back(make_concrete(bg.type(bg.inputs()[k]), inputs[k]));
        std::vector<runtime::BufferPtr> outs;
        for (const Array& a : run_executable(*body, args, {}, JitOptions{})) outs.push_back(data_buffer(*a.impl()));
        return outs;
      });
    };
  }
  return kernels;
}

JitPasses run_jit_passes(const ir::Graph& traced, const std::vector<bool>& donated) {
  // Simplify, fold what is constant, and simplify what folding exposed (each pass linear).
  ir::GraphPtr simplified = transforms::simplify(traced).graph;
  interpreter::FoldResult folded = interpreter::fold_constants(*simplified);
  ir::GraphPtr cleaned = folded.folded ? transforms::simplify(*folded.graph).graph : simplified;
  // Checkpoints are differentiated by now: their forward passes join the graph (after
  // CSE, so that a backward pass's recomputation stays apart from them) and fuse.
  JitPasses p;
  p.clean = transforms::inline_remat(cleaned);
  // Fused kernels run as generated C++ (cpu), CUDA kernels, or in the interpreter's tiled evaluator;
  // values one kernel would write only for others that can recompute them cheaply are not written.
  p.fused = transforms::fuse(*p.clean, nullptr, donated);
  const char* recompute = std::getenv("GRAFT_RECOMPUTE_FUSED");  // "0": write them all (for comparisons)
  if (!(recompute && std::string_view(recompute) == "0")) p.fused = transforms::recompute_fused_outputs(*p.fused);
  return p;
}

Backend resolve_backend(Backend b) { return resolve(b); }

std::shared_ptr<Executable> executable_of_fused(ir::GraphPtr fused, const ir::Graph& clean, int64_t nodes_before,
                                                Backend backend, const JitOptions& options,
                                                const std::vector<bool>& donated, bool compile_kernels) {
  auto exe = std::make_shared<Executable>();
  exe->backend = backend;
  exe->nodes_before = nodes_before;
  exe->graph = std::move(fused);
  if (compile_kernels) {
    exe->pmap_kernels = pmap_kernels(*exe->graph, options);
    if (exe->backend == Backend::cpu) exe->cpu = start_cpu_compile(exe->graph, options.wait_for_compile);
    if (exe->backend == Backend::cuda) {
      exe->cuda = std::make_shared<const codegen::cuda::CudaGraphKernels>(
          codegen::cuda::cuda_graph_kernels(*exe->graph, exe->pmap_kernels.empty() ? nullptr : &exe->pmap_kernels));
      if (log_compiles()) {
        std::fprintf(stderr, "graft: jit cuda: %lld nodes on the GPU (%lld distinct kernels), %zu on the host\n",
                     static_cast<long long>(exe->cuda->generated), static_cast<long long>(exe->cuda->distinct),
                     exe->cuda->on_host.size());
        for (const std::string& why : exe->cuda->on_host)
          std::fprintf(stderr, "graft: jit cuda: runs on the host: %s\n", why.c_str());
      }
    }
  }
  exe->donation_plan = interpreter::donation_plan(*exe->graph, donated);
  // Flops are the ops' own (a fused op still computes); bytes are what the kernels move.
  exe->cost = cost_of(*exe->graph);
  exe->cost.flops = cost_of(clean).flops;
  exe->memory = memory_of(*exe->graph, exe->donation_plan);
  exe->plan = codegen::plan_memory(*exe->graph);
  exe->memory.temp_bytes = exe->plan.arena_bytes;
  exe->site = executable_site(*exe->graph);
  // (An instance of a polymorphic executable shares its constants with the first sample's: counted once.)
  if (int64_t held = compile_kernels ? constant_bytes(*exe->graph) : 0; held > 0)
    exe->held = std::make_unique<runtime::ExecutableMemory>(runtime::current_device(), held, exe->site);
  return exe;
}

std::shared_ptr<const Executable> compile_graph(const Graph& g, const JitOptions& options,
                                                const std::vector<bool>& donated) {
  const Backend backend = resolve(options.backend);
  JitPasses p = run_jit_passes(g.ir(), donated);
  return executable_of_fused(p.fused, *p.clean, g.num_nodes(), backend, options, donated, true);
}

namespace {
// The end of every call: donated arguments give up their buffers; the outputs become Arrays.
std::vector<Array> finish_call(const ir::Graph& g, const std::vector<Array>& leaves, const std::vector<bool>& donated,
                               const std::vector<bool>& reused, const JitOptions& options,
                               const std::vector<runtime::BufferPtr>& outs);
std::vector<Array> run_on_cuda(const Executable& exe, const std::vector<Array>& leaves,
                               std::vector<runtime::BufferPtr>& buffers, const std::vector<bool>& donated,
                               const JitOptions& options);
}  // namespace

std::vector<Array> run_executable(const Executable& exe, const std::vector<Array>& leaves,
                                  const std::vector<bool>& donated, const JitOptions& options) {
  if (exe.poly) {  // shape-polymorphic: the instance at the arguments' sizes
    std::vector<ir::ValueType> types;
    types.reserve(leaves.size());
    for (const Array& a : leaves) types.push_back(live_impl(a, "jit").type);
    return run_executable(*exe.poly->instance(bind_symbols(exe.poly->spec, types)), leaves, donated, options);
  }
  const ir::Graph& g = *exe.graph;
  const runtime::ShareCpusWithOtherWork share;  // fewer threads while other processes hold cores
  if (leaves.size() != g.inputs().size())
    throw Error("jit: the executable takes " + std::to_string(g.inputs().size()) + " arrays, got " +
                std::to_string(leaves.size()));
  std::vector<runtime::BufferPtr> buffers;
  buffers.reserve(leaves.size());
  for (size_t i = 0; i < leaves.size(); ++i) {
    const ArrayImpl& impl = live_impl(leaves[i], "jit");
    if (impl.traced()) throw TracerLeakError("jit: a traced value was passed to a compiled executable");
    if (impl.type != g.type(g.inputs()[i]))
      throw ShapeError("jit: argument leaf " + std::to_string(i) + " is " + ir::type_str(impl.type) +
                       " but the executable was compiled for " + ir::type_str(g.type(g.inputs()[i])));
    buffers.push_back(data_buffer(impl));
  }
  // A buffer donated twice (or donated and passed again) would be written while still read.
  for (size_t i = 0; i < donated.size(); ++i) {
    if (!donated[i]) continue;
    for (size_t j = 0; j < leaves.size(); ++j)
      if (j != i && buffers[j] == buffers[i])
        throw Error("jit: argument leaf " + std::to_string(i) + " is donated but its buffer is also passed as leaf " +
                    std::to_string(j) + " in the same call; donate a buffer once");
  }
  if (exe.cuda) return run_on_cuda(exe, leaves, buffers, donated, options);
  for (runtime::BufferPtr& b : buffers)  // the interpreter and cpu kernels read host memory
    if (!b->device().host_addressable()) b = runtime::copy_onto(runtime::host_device(), *b);
  std::vector<bool> reused;
  // Until its module is loaded, a cpu executable runs on the interpreter (the same fused graph, the same bits).
  const codegen::cpu::FusedGraphKernels* compiled = exe.cpu ? exe.cpu->ready() : nullptr;
  if (exe.cpu) (compiled ? g_tier_counts.compiled : g_tier_counts.interpreted).fetch_add(1, std::memory_order_relaxed);
  const std::vector<interpreter::NodeKernel>* kernels = compiled && compiled->compiled ? &compiled->node_kernels : nullptr;
  // A polymorphic instance: the first sample's kernels, until its own module (if it needs one) is loaded.
  if (!compiled && exe.rebound && exe.rebound->compiled) kernels = &exe.rebound->node_kernels;
  if (!exe.pmap_kernels.empty()) {
    if (kernels) {
      std::call_once(exe.merged_once, [&] {
        exe.merged_kernels = exe.pmap_kernels;
        for (size_t i = 0; i < kernels->size(); ++i)
          if (!exe.merged_kernels[i]) exe.merged_kernels[i] = (*kernels)[i];
      });
      kernels = &exe.merged_kernels;
    } else {
      kernels = &exe.pmap_kernels;
    }
  }
  interpreter::EvaluateOptions run{donated, &reused, kernels, &exe.plan.offset, exe.plan.arena_bytes};
  runtime::SiteScope site(exe.site);
  std::vector<runtime::BufferPtr> outs = interpreter::evaluate(g, buffers, run);
  return finish_call(g, leaves, donated, reused, options, outs);
}

namespace {

// A cuda executable runs on the CUDA device of its first argument on one
// (cuda:0 when none is); arguments elsewhere are copied there first.
std::vector<Array> run_on_cuda(const Executable& exe, const std::vector<Array>& leaves,
                               std::vector<runtime::BufferPtr>& buffers, const std::vector<bool>& donated,
                               const JitOptions& options) {
  runtime::Device* device = nullptr;
  for (const runtime::BufferPtr& b : buffers)
    if (codegen::cuda::is_cuda_device(b->device())) {
      device = &b->device();
      break;
    }
  if (!device) device = codegen::cuda::cuda_devices().at(0);
  for (runtime::BufferPtr& b : buffers)
    if (&b->device() != device) b = runtime::copy_onto(*device, *b);
  std::vector<bool> reused;
  interpreter::EvaluateOptions run{donated, &reused, &exe.cuda->node_kernels, &exe.plan.offset, exe.plan.arena_bytes};
  runtime::SiteScope site(exe.site);
  runtime::DeviceScope on_device(*device);
  std::vector<runtime::BufferPtr> outs = interpreter::evaluate(*exe.graph, buffers, run);
  return finish_call(*exe.graph, leaves, donated, reused, options, outs);
}

}  // namespace

std::shared_ptr<const Executable> compile_with_refs(const Graph& g, const JitOptions& options,
                                                    std::vector<bool> donated, const std::vector<size_t>& ref_inputs) {
  for (size_t pos : ref_inputs) donated.at(pos) = true;  // the final value may take the Ref's own buffer
  auto exe = std::const_pointer_cast<Executable>(compile_graph(g, options, donated));
  attach_refs(*exe, ref_inputs);
  return exe;
}

void attach_refs(Executable& exe, const std::vector<size_t>& ref_inputs) {
  exe.ref_inputs = ref_inputs;
  const size_t n_out = exe.graph->outputs().size() - ref_inputs.size();
  for (size_t k = 0; k < ref_inputs.size(); ++k) {
    exe.ref_in_place.push_back(exe.donation_plan[ref_inputs[k]] == static_cast<int64_t>(n_out + k));
    // Written where the Ref's elements already are: no output memory of its own.
    exe.memory.output_bytes -= bytes_of(exe.graph->type(exe.graph->outputs()[n_out + k]));
  }
}

std::vector<Array> run_with_refs(const Executable& exe, std::vector<Array> leaves, std::vector<bool> donated,
                                 const JitOptions& options) {
  // Each Ref's own Array keeps its buffer; the executable gets a second
  // handle on it, donated when the final value can be written in place.
  std::vector<Array> own;
  for (size_t k = 0; k < exe.ref_inputs.size(); ++k) {
    const size_t pos = exe.ref_inputs[k];
    const ArrayImpl& impl = live_impl(leaves[pos], "Ref argument");
    own.push_back(leaves[pos]);
    leaves[pos] = Array(make_concrete(impl.type, data_buffer(impl)));
    donated[pos] = exe.ref_in_place[k];
  }
  std::vector<Array> outs = run_executable(exe, leaves, donated, options);
  const size_t n_out = outs.size() - own.size();
  for (size_t k = 0; k < own.size(); ++k) {
    const ArrayImpl& dst = *own[k].impl();
    const ArrayImpl& src = live_impl(outs[n_out + k], "Ref result");
    const runtime::BufferPtr& to = data_buffer(dst);
    const runtime::BufferPtr& from = data_buffer(src);
    if (to->data() != from->data() && to->size())
      runtime::copy_bytes(to->device(), to->data(), from->device(), from->data(), to->size());
  }
  outs.resize(n_out);
  return outs;
}

namespace {

std::vector<Array> finish_call(const ir::Graph& g, const std::vector<Array>& leaves, const std::vector<bool>& donated,
                               const std::vector<bool>& reused, const JitOptions& options,
                               const std::vector<runtime::BufferPtr>& outs) {
  static std::atomic<bool> warned{false};
  for (size_t i = 0; i < donated.size(); ++i) {
    if (!donated[i]) continue;
    if (!reused[i]) {
      std::string msg = "jit: donated argument leaf " + std::to_string(i) + " (" + ir::type_str(g.type(g.inputs()[i])) +
                        ") backs no output (no output of its size and dtype is computed after its last use)";
      if (options.donation_must_apply) throw Error(msg);
      if (!warned.exchange(true)) {
        std::fprintf(stderr, "graft: %s; the buffer is still freed. (warned once)\n", msg.c_str());
      }
    }
    // The caller's Array gives up its buffer either way, as with JAX.
    leaves[i].impl()->deleted = true;
    leaves[i].impl()->buffer.reset();
    leaves[i].impl()->shards.clear();
  }
  std::vector<Array> result;
  result.reserve(outs.size());
  for (size_t k = 0; k < outs.size(); ++k) result.emplace_back(make_concrete(g.type(g.outputs()[k]), outs[k]));
  return result;
}

}  // namespace

std::string executable_text(const Executable& exe) {
  const codegen::cpu::FusedGraphKernels* compiled = exe.cpu ? exe.cpu->ready() : nullptr;
  std::string s = "backend: interpreter\n";
  if (exe.cuda)
    s = "backend: cuda (" + std::to_string(exe.cuda->generated) + " nodes on the GPU: generated kernels (" +
        std::to_string(exe.cuda->distinct) + " distinct) and cuBLAS; " + std::to_string(exe.cuda->on_host.size()) +
        " on the host)\n";
  else if (compiled)
    s = "backend: cpu (" + std::to_string(compiled->compiled) + " fused kernels compiled to C++, " +
        std::to_string(compiled->distinct) + " distinct, in " + std::to_string(compiled->modules) +
        (compiled->modules == 1 ? " module)\n" : " modules)\n");
  else if (exe.cpu && exe.cpu->finished())
    s = "backend: cpu (its module failed to compile; calls run on the interpreter)\n" + exe.cpu->failure() + "\n";
  else if (exe.cpu)
    s = "backend: cpu (compiling in the background; until it loads, calls run on the interpreter)\n";
  s += "nodes: " + std::to_string(exe.graph->num_nodes()) + " (traced: " + std::to_string(exe.nodes_before) + ")\n";
  if (exe.poly) s += polymorphic_text(*exe.poly);
  for (size_t i = 0; i < exe.donation_plan.size(); ++i)
    if (exe.donation_plan[i] >= 0)
      s += "donation: input " + std::to_string(i) + " backs output " + std::to_string(exe.donation_plan[i]) + "\n";
  s += "temporaries: " + std::to_string(exe.plan.placed) + " values in one arena of " +
       std::to_string(exe.plan.arena_bytes) + " bytes (" + std::to_string(exe.plan.sum_bytes) + " unplanned, " +
       std::to_string(exe.plan.in_place) + " in place)\n";
  // The fused kernels, each with the ops it runs (constants copied into it aside).
  std::string kernels;
  int64_t count = 0;
  for (const ir::Node& n : exe.graph->nodes()) {
    if (n.op != ir::Op::fusion) continue;
    const ir::Graph& body = *ir::attr<ir::Graphs>(n, "body").at(0);
    std::string names;
    int64_t ops = 0;
    for (const ir::Node& b : body.nodes()) {
      if (b.op == ir::Op::constant) continue;
      if (ops < 8) {
        if (ops) names += ", ";
        names += ir::op_name(b.op);
      } else if (ops == 8) {
        names += ", ...";
      }
      ++ops;
    }
    kernels += "kernel ";
    kernels += std::to_string(count);
    kernels += ": fusion of ";
    kernels += std::to_string(ops);
    kernels += ops == 1 ? " op (" : " ops (";
    kernels += names;
    kernels += ") ->";
    for (ir::ValueId v : n.outputs) {
      kernels += ' ';
      kernels += ir::type_str(exe.graph->type(v));
    }
    kernels += '\n';
    ++count;
  }
  const ExecutableInfo info = executable_info(exe);
  s += "fusion: ";
  s += std::to_string(info.fusion_kernels);
  s += info.fusion_kernels == 1 ? " kernel, " : " kernels, ";
  s += std::to_string(info.fused_ops);
  s += " ops fused\n";
  s += kernels;
  s += Graph(exe.graph).to_text();
  if (exe.cuda) {
    for (const std::string& why : exe.cuda->on_host) s += "runs on the host: " + why + "\n";
    if (!exe.cuda->source.empty()) s += "generated CUDA:\n" + exe.cuda->source;
  }
  if (compiled) {
    for (const std::string& why : compiled->refused) s += "runs in the interpreter: " + why + "\n";
    if (!compiled->source.empty()) s += "generated C++:\n" + compiled->source;
  }
  return s;
}

TierCounts tier_counts() { return {g_tier_counts.interpreted.load(), g_tier_counts.compiled.load()}; }

ExecutableInfo executable_info(const Executable& exe) {
  ExecutableInfo info;
  info.nodes = exe.graph->num_nodes();
  info.traced_nodes = exe.nodes_before;
  for (const ir::Node& n : exe.graph->nodes()) {
    if (n.op != ir::Op::fusion) continue;
    ++info.fusion_kernels;
    for (const ir::Node& b : ir::attr<ir::Graphs>(n, "body").at(0)->nodes()) info.fused_ops += b.op != ir::Op::constant;
  }
  if (const codegen::cpu::FusedGraphKernels* compiled = exe.cpu ? exe.cpu->ready() : nullptr) {
    info.compiled_kernels = compiled->compiled;
    info.distinct_kernels = compiled->distinct;
  }
  if (exe.cuda) {
    info.compiled_kernels = exe.cuda->generated;
    info.distinct_kernels = exe.cuda->distinct;
  }
  info.arena_bytes = exe.plan.arena_bytes;
  return info;
}

CostAnalysis executable_cost(const Executable& exe) { return exe.cost; }
MemoryAnalysis executable_memory(const Executable& exe) { return exe.memory; }

std::string cache_miss_reason(const std::vector<std::string>& previous, const std::vector<std::string>& now) {
  std::string why;
  if (previous.empty()) {
    why = "first call";
  } else if (previous.size() != now.size()) {
    why = "the number of arguments changed";
  } else {
    for (size_t i = 0; i < now.size(); ++i)
      if (previous[i] != now[i]) {
        if (!why.empty()) why += "; ";
        why += "argument " + std::to_string(i) + " changed from " + previous[i] + " to " + now[i];
      }
    if (why.empty()) why = "the signature differs from every cached one";
  }
  return why;
}

void log_cache_miss(const std::string& name, const std::vector<std::string>& previous,
                    const std::vector<std::string>& now, size_t entries) {
  if (!log_compiles()) return;
  std::fprintf(stderr, "graft: %s cache miss (%zu cached): %s\n", name.c_str(), entries,
               cache_miss_reason(previous, now).c_str());
}

void note_static_retrace(const std::vector<std::string>& previous, const std::vector<std::string>& now,
                         const std::vector<bool>& is_static, int* count, bool* warned, const std::source_location& site) {
  constexpr int kWarnAfter = 5;  // retraces a static argument may cause before the warning
  if (previous.size() != now.size() || now.size() != is_static.size()) return;
  size_t changed = now.size();
  for (size_t k = 0; k < now.size(); ++k) {
    if (previous[k] == now[k]) continue;
    if (!is_static[k]) return;  // an Array's shape or dtype changed: a retrace jit cannot avoid
    changed = k;
  }
  if (changed == now.size() || ++*count <= kWarnAfter || *warned) return;
  *warned = true;
  std::fprintf(stderr,
               "graft: warning: jit of the function at %s:%u has traced %d times because its static argument %zu "
               "changed (last: %s -> %s); every new value traces and compiles anew. Pass it as an Array "
               "(graft::scalar(x)) to trace once. (warned once)\n",
               site.file_name(), static_cast<unsigned>(site.line()), *count + 1, changed, previous[changed].c_str(),
               now[changed].c_str());
}

void log_compile(const std::string& name, double trace_ms, double compile_ms) {
  if (!log_compiles()) return;
  std::fprintf(stderr, "graft: %s traced in %.2f ms, compiled in %.2f ms\n", name.c_str(), trace_ms, compile_ms);
}

}  // namespace detail
}  // namespace graft
