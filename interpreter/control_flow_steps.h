// How cond, while and scan step, written once for every place their bodies
// run: the interpreter's kernels (interpreter/kernels/control_flow.cpp, host
// memory, memcpy) and the CUDA backend's (codegen/cuda/control_flow.cpp,
// device memory, bodies with CUDA kernels). The operand layout is
// ops/control.cpp's. A body never writes into its inputs, except
// a while's carries it is given (buffers the loop owns alone), so the
// buffers it returns become the next step's inputs without copying.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "interpreter/kernel.h"
#include "runtime/buffer.h"

namespace graft::interpreter {

using Buffers = std::vector<runtime::BufferPtr>;

// What differs between the places bodies run.
struct ControlFlowMemory {
  // A new buffer (on the current device) holding `bytes` copied from `src`.
  std::function<runtime::BufferPtr(const void* src, size_t bytes)> copy_in;
  // `bytes` from `src` to `dst`, both on the current device.
  std::function<void(void* dst, const void* src, size_t bytes)> copy;
  // `bytes` from `src` on the current device into host memory at `dst`
  // (a cond's index, a while's predicate).
  std::function<void(void* dst, const void* src, size_t bytes)> read;
  // A buffer viewing `bytes` at `src` without copying, for operands the
  // bodies only read (a loop's constants, a cond's operands); empty: copy_in.
  std::function<runtime::BufferPtr(const void* src, size_t bytes)> view;
};

// Runs subgraph k of the node (the branches of cond; cond then body of
// while; body of scan) on `inputs`; an input flagged in `donated` (or none,
// when it is empty) may back an output (a while's carry, dead after the
// step: a dynamic_update_slice of a big carry then writes in place).
using RunBody = std::function<Buffers(size_t body, const Buffers& inputs, const std::vector<bool>& donated)>;

void run_cond(const KernelCall& call, size_t num_branches, const ControlFlowMemory& memory, const RunBody& run);
void run_while(const KernelCall& call, const ControlFlowMemory& memory, const RunBody& run);
void run_scan(const KernelCall& call, const ControlFlowMemory& memory, const RunBody& run);

}  // namespace graft::interpreter
