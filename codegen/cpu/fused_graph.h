// Backend::cpu for a fused graph: every fusion node whose body the emitter
// accepts runs generated code; the other nodes keep the interpreter's kernels.
//
// Compile time follows the number of distinct kernels, not of fusion nodes:
//   - fusion nodes whose kernels have the same source (a deep network's
//     layers: shapes are structural, constants are parameters) share one
//     compiled kernel;
//   - distinct kernels are split into modules of at most kKernelsPerModule,
//     compiled in parallel (one compiler per core) and cached one by one
//     (compiler.h), so a module is shared by every graph that has its kernels.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "codegen/cpu/emit.h"
#include "interpreter/evaluate.h"
#include "ir/graph.h"

namespace graft::codegen::cpu {

// Kernels per module: small enough that a large graph's modules keep every
// core busy, large enough that the compiler's start-up (~0.1 s) is paid rarely.
inline constexpr size_t kKernelsPerModule = 24;

struct KernelIndex;  // fused_graph.cpp: the loaded kernels by source

struct FusedGraphKernels {
  std::vector<interpreter::NodeKernel> node_kernels;  // by node index; empty: the interpreter's kernel
  std::string source;                                 // the modules' C++ source ("" when nothing compiled)
  int64_t compiled = 0;                               // fusion nodes run by generated code
  int64_t distinct = 0;                               // distinct kernels among them
  int64_t modules = 0;                                // modules they were compiled in
  std::vector<std::string> refused;                   // why the other fusion nodes were not emitted
  int64_t differing = 0;  // rebind_fused_graph: fusion nodes whose code at these sizes the module lacks
  std::shared_ptr<const KernelIndex> index;           // the loaded kernels by source, for rebind_fused_graph
};

// Emits, compiles (or finds in the caches) and loads the kernels of `graph`'s
// fusion nodes. Throws graft::Error when the compiler fails. With
// only_if_cached, compiles nothing: when a module is neither loaded nor on
// disk it returns std::nullopt.
FusedGraphKernels compile_fused_graph(const ir::Graph& graph);
std::optional<FusedGraphKernels> compile_fused_graph_if_cached(const ir::Graph& graph);

// The kernels of `graph`'s fusion nodes whose generated source is one that
// `loaded` compiled (a shape-polymorphic program at other sizes: sizes are
// kernel parameters, so a source changes only where the sizes change the
// code, emit.h); compiles nothing. The other fusion nodes run on the
// interpreter (listed in `refused`), unless `generic` (by node index, from
// size_generic_sources) names a kernel that serves the node at every size:
// that kernel runs with its own sizes and this graph's n.
FusedGraphKernels rebind_fused_graph(const ir::Graph& graph, const FusedGraphKernels& loaded,
                                     const std::vector<std::optional<KernelSource>>* generic = nullptr);

// By node index, the kernel of each fusion node whose source and sizes are
// the same in every one of `samples` (one program at several sizes): such a
// kernel depends on the sizes only through its element count n, which it
// takes at run time, so it serves the node at any size, even one where the
// emitter would write another source (a size of 1, whose axis it drops).
// nullopt for the others.
std::vector<std::optional<KernelSource>> size_generic_sources(const std::vector<ir::GraphPtr>& samples);

}  // namespace graft::codegen::cpu
