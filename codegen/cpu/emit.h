// The CPU code generator: C++ source for one fused elementwise kernel.
//
// A kernel body is an ir::Graph of
//   - elementwise ops (the elementwise family of ir/ops.def),
//   - broadcast_in_dim and reshape of the body's inputs (or of scalars),
//   - reshape of computed values (layout-free) and size-1 broadcasts,
//   - constant nodes of one element,
//   - optionally one trailing reduce_sum / reduce_max / reduce_min as the
//     last node.
// Every computed value but the reduction's result has the iteration space's
// N elements (or one element: such values are computed once per call).
//
// ABI of the emitted function (extern "C", default visibility):
//
//   void <symbol>(const void* const* inputs, void* const* outputs,
//                 const int64_t* scalars, int64_t n);
//
//   inputs[j]   the buffer of body.inputs()[j] (row-major, dense)
//   outputs[k]  the buffer of body.outputs()[k]; in a kernel without a
//               reduction, outputs may alias inputs of the same shape (in
//               place): every element is read before it is written. A kernel
//               with a reduction may read its inputs again after writing its
//               elementwise outputs, so its outputs must not alias inputs.
//   scalars     one int64 per constant node, in node order, holding the
//               constant's bytes in its low bytes (kernel_constants(body)),
//               then the kernel's sizes (KernelSource::sizes): together
//               kernel_scalars(body)
//   n           elements to compute: N, the iteration space's size. An
//               elementwise kernel computes elements [0, n) for any
//               0 <= n <= N; a kernel with a reduction requires n == N.
//
// Buffers, constant values and sizes are parameters: a new constant value or
// a new size changes kernel_scalars(body), not the source. What the sizes
// decide stays in the source (structural): ranks, which axes merge (a size
// of 1 drops its axis), which loops run (a row sum of short rows or of long
// ones), the lengths of arrays on the stack. So one compiled kernel serves
// every size that gives its source, whichever axis the sizes change: a
// shape-polymorphic program's instances, a jitted function at a new shape.
//
// Every emitted source starts with a shared prelude guarded by a macro, so
// the sources of several kernels (with distinct symbols) concatenate into one
// module. A module must be initialised by compiler.h (compile_kernels does
// it) before its kernels run: it receives the table of math.h.
//
// Semantics are the interpreter's, bit for bit, for every elementwise op
// (tests/codegen/cpu_codegen_test.cpp). A trailing reduction matches the
// interpreter exactly for reduce_max / reduce_min, for integer sums and for
// float sums whose reduced axes are not the innermost ones (each output adds
// its elements in the interpreter's order). A float sum over innermost axes
// (a row or full reduction) adds in a fixed order that differs from the
// interpreter's sequential one: see emit.cpp ("run sums"); the difference is
// rounding, bounded by about len * eps * sum|x|, and never depends on the
// number of threads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace graft::codegen::cpu {

// A kernel's source and the sizes it reads at run time, z[0], z[1], ...
struct KernelSource {
  std::string text;
  std::vector<int64_t> sizes;
};

// The kernel `symbol` computing `body`. Throws graft::UnsupportedError when
// the body is not of the form above.
KernelSource emit_kernel_source(const ir::Graph& body, const std::string& symbol);
// Its text alone.
std::string emit_kernel(const ir::Graph& body, const std::string& symbol);

// The `scalars` argument of a kernel emitted from `body`: its constants, then its sizes.
std::vector<int64_t> kernel_scalars(const ir::Graph& body);
// The constants alone, one int64 per constant node (the CUDA emitter's parameters too).
std::vector<int64_t> kernel_constants(const ir::Graph& body);

// The `n` argument of a kernel emitted from `body`: its iteration space's size N.
int64_t kernel_elements(const ir::Graph& body);

// Why `body` cannot be emitted, or nullopt when it can.
std::optional<std::string> unsupported_reason(const ir::Graph& body);

// Tuning constants of the emitted loops (part of every source).
inline constexpr int64_t kBlock = 256;              // elements per inner block (multiple of 16)
inline constexpr int64_t kSumChunk = 4096;          // elements per partial sum (multiple of kBlock)
inline constexpr int64_t kParallelMin = 1 << 15;    // fewer elements run on one thread
inline constexpr int64_t kColumnPiece = 1024;       // rows per piece of a column sum (32 column blocks)
inline constexpr int64_t kFewColumnBlocks = 16;     // fewer column blocks: their rows split into pieces

}  // namespace graft::codegen::cpu
