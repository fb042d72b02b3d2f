// The CUDA code generator: CUDA C++ for one fused body (a `fusion` node's
// body), from the body's plan (ir/fused_plan.h).
//
// Bodies: those the CPU emitter takes (codegen/cpu/emit.h): elementwise ops,
// broadcasts and reshapes of the inputs, one-element constants, and
// optionally one trailing reduce_sum / reduce_max / reduce_min.
//
// Kernel shapes (every kernel runs kThreadsPerBlock threads per block):
//   elementwise  a grid-stride loop over the N elements of the space;
//   rows         the reduced axes include the innermost: one block per
//                output element (grid-stride over outputs), its threads
//                striding over the reduced elements, combined by
//                gcg_block_reduce (warp shuffles, then shared memory) in a
//                fixed tree; a full reduction is one row;
//   columns      the innermost axis is kept: one thread per output element,
//                adding its reduced elements in the interpreter's order
//                (row-major over the reduced axes), so exact.
// No float atomics anywhere: every run gives the same bits.
//
// ABI: `extern "C" __global__ void <symbol>(const <symbol>_params p)`,
// one parameter, a struct of 8-byte fields in this order:
//   in0 .. in<J-1>    the body inputs' device pointers (typed)
//   out0 .. out<K-1>  the body outputs' device pointers (typed); an output
//                     may alias an input of the same shape in an
//                     elementwise kernel (each element is read and written
//                     by one thread), never in a reduction kernel
//   s0 .. s<M-1>      int64: the one-element constants' bytes
//                     (cpu::kernel_constants(body), node order)
//   z0 .. z<S-1>      int64: the sizes the source reads (Sizes::parameters
//                     only; CudaKernel::sizes)
//   n                 int64: the iteration space's N
// so a launcher passes a uint64_t array (kernel_params).
//
// With GCG_EMULATED defined, each kernel also defines
// `extern "C" void <symbol>_emulated(const void* params)` calling it: the
// emulated driver's entry (codegen/cuda/emulator/).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"

namespace graft::codegen::cuda {

enum class KernelShape { elementwise, rows, columns };

// Where a kernel's sizes (views' strides, groups' sizes, counts) are written:
// literals (the compiler divides by constants: the default), or parameters,
// so that one source serves every size of one form of the body (a
// shape-polymorphic program's instances; the outermost size is p.n either
// way). What the sizes decide (which axes merge, the kernel's shape) stays
// in the source.
enum class Sizes { literals, parameters };

struct CudaKernel {
  std::string source;  // prelude + the kernel: a whole module
  std::string symbol;
  KernelShape shape = KernelShape::elementwise;
  // Grid-stride work: elements (elementwise), output elements (rows: one
  // block each; columns: one thread each).
  int64_t work = 0;
  int num_inputs = 0, num_outputs = 0;
  std::vector<int64_t> scalars;  // the constants' bytes, as kernel parameters
  std::vector<int64_t> sizes;    // Sizes::parameters: the sizes, as kernel parameters after them
  int64_t n = 0;
  // std::hash of `source` once known (0: not computed), so a driver finds a
  // loaded module by one integer and one string compare, not by ordering
  // whole sources that share a long prelude.
  size_t source_hash = 0;
  // (input j, output k): before the launch, input j is copied into output k
  // unless they are one buffer (an op kernel that updates its operand in
  // place, scatter_add: the copy runs at the device's copy bandwidth).
  std::vector<std::pair<int, int>> copy_before;
};

// k.source_hash, or the source's hash when it was not recorded.
size_t source_hash(const CudaKernel& k);

// The kernel computing `body`; throws UnsupportedError when the body is not
// of the form above.
CudaKernel emit_kernel(const ir::Graph& body, const std::string& symbol, Sizes sizes = Sizes::literals);

// The kernel's parameter block for these device buffers.
std::vector<uint64_t> kernel_params(const CudaKernel& k, const std::vector<const void*>& inputs,
                                    const std::vector<void*>& outputs);

// Blocks to launch with at most `max_blocks` (the device's resident blocks).
int64_t grid_blocks(const CudaKernel& k, int64_t max_blocks);

}  // namespace graft::codegen::cuda
