// The interpreter's kernels: one per primitive, by family in
// interpreter/kernels/<family>.cpp. A kernel reads typed input buffers and
// fills preallocated output buffers whose types the shape rule inferred.
#pragma once

#include "ir/attr_access.h"

#include <array>
#include <vector>

#include "ir/attrs.h"
#include "ir/op.h"
#include "ir/value.h"

namespace graft::interpreter {

struct KernelIn {
  const ir::ValueType* type;
  const void* data;
};
struct KernelOut {
  const ir::ValueType* type;
  void* data;
};
struct KernelCall {
  ir::Op op;
  const ir::Attrs& attrs;
  std::vector<KernelIn> inputs;
  std::vector<KernelOut> outputs;
};

// Checked reads of a call's attributes (ir/attr_access.h): a missing or
// mistyped one is a GraphFormatError naming the op and the attribute.
inline int64_t int_attr(const KernelCall& call, std::string_view name) { return ir::attr<int64_t>(call.attrs, name, call.op); }
inline const ir::Ints& ints_attr(const KernelCall& call, std::string_view name) {
  return ir::attr<ir::Ints>(call.attrs, name, call.op);
}

using Kernel = void (*)(const KernelCall&);
using KernelTable = std::array<Kernel, ir::kNumOps>;

// The kernel of every op whose ops.def `kernel` column says OWN:
// <ident>_kernel, defined in interpreter/kernels/<family>.cpp (the others
// are declared, never defined).
#define GRAFT_OP(ident, ...) void ident##_kernel(const KernelCall& call);
#include "ir/ops.def"
#undef GRAFT_OP

// Whether the CPU's bf16 units (oneDNN: interpreter/onednn_products.h) can serve
// a product's call: two bf16 operands, a bf16 or f32 result, units here.
bool bf16_units_serve(const KernelCall& call);

// dot_general of bf16 operands on the CPU's bf16 instructions (oneDNN), where
// it has them and the product is big enough; false (nothing written) where
// the product is to be widened to f32 instead (interpreter/kernels/linalg.cpp).
bool dot_general_bf16_native(const KernelCall& call);
// conv_general_dilated on oneDNN's convolutions: bf16 operands where the
// bf16 units serve them, f32 ones where f32_conv_on_onednn(); false
// (nothing written) where graft's own kernel is to run it
// (interpreter/kernels/conv.cpp).
bool conv_general_dilated_onednn(const KernelCall& call);

// The kernel of an op whose `kernel` column says SCALAR or VECTOR_MATH: a
// loop over its scalar function (interpreter/kernels/elementwise.cpp).
Kernel elementwise_kernel(ir::Op op);

Kernel kernel_for(ir::Op op);  // nullptr when the op has none
// Puts `kernel` in op's place and returns the one it had: only for the
// mutation tests (a deliberately wrong kernel must fail the corpus). Not
// thread-safe; restore the old kernel before anything else runs.
Kernel replace_kernel(ir::Op op, Kernel kernel);
void run_kernel(const KernelCall& call);  // throws UnsupportedError when the op has none

// Loops above this many elements run on OpenMP threads.
inline constexpr int64_t kParallelThreshold = 1 << 15;

}  // namespace graft::interpreter
