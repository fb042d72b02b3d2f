// The graph walker: runs nodes in order with the interpreter's kernels and
// frees each intermediate buffer right after its last use.
#pragma once

#include <functional>
#include <vector>

#include "interpreter/kernel.h"
#include "ir/graph.h"
#include "runtime/buffer.h"

namespace graft::interpreter {

// inputs[i] holds graph.inputs()[i]; returns one buffer per graph output.
std::vector<runtime::BufferPtr> evaluate(const ir::Graph& graph, const std::vector<runtime::BufferPtr>& inputs);

// As evaluate, with buffer donation: an output may be written into the
// buffer of an input flagged in `donated` when they have the same size and
// the input is not read after the node that computes the output (or that
// node reads it elementwise, which is safe in place). `reused`, when given,
// receives which donated inputs back an output.
std::vector<runtime::BufferPtr> evaluate(const ir::Graph& graph, const std::vector<runtime::BufferPtr>& inputs,
                                         const std::vector<bool>& donated, std::vector<bool>* reused);

// A kernel that replaces the interpreter's for one node (a compiled fused kernel).
using NodeKernel = std::function<void(const KernelCall&)>;

struct EvaluateOptions {
  std::vector<bool> donated;            // as above
  std::vector<bool>* reused = nullptr;  // as above
  // By node index; an empty entry (or no vector) runs the interpreter's kernel.
  const std::vector<NodeKernel>* node_kernels = nullptr;
  // A memory plan (codegen/memory_plan.h): by value id, the offset of the
  // value in one arena of `arena_bytes` allocated per call, or -1.
  const std::vector<int64_t>* arena_offsets = nullptr;
  int64_t arena_bytes = 0;
};
std::vector<runtime::BufferPtr> evaluate(const ir::Graph& graph, const std::vector<runtime::BufferPtr>& inputs,
                                         const EvaluateOptions& options);

// Runs `body` as the kernel of `call` (call-like ops, fused kernels the tiled
// evaluator cannot run): operands are copied into buffers the walker owns,
// results copied out into the call's outputs.
void evaluate_call(const ir::Graph& body, const KernelCall& call);

// Which donated inputs evaluate would reuse, and for which output: the plan,
// without running anything (for memory analysis). -1 where none.
std::vector<int64_t> donation_plan(const ir::Graph& graph, const std::vector<bool>& donated);

}  // namespace graft::interpreter
