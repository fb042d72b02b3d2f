#include "interpreter/kernel.h"

#include <algorithm>
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "graft/errors.h"
#include "interpreter/kernels/convert.h"
#include "interpreter/kernels/loops.h"
#include "interpreter/onednn_products.h"
#include "ir/dtype.h"

namespace graft::interpreter {

using ir::Op;
namespace {

// The families whose kernels compute on f32 when their operands or results
// are f16 or bf16: JAX's CPU backend sorts, reduces, multiplies matrices and
// sums across replicas of halves in f32, rounding once at the end. (The
// elementwise kernels compute each op in f32 themselves; the shape and
// creation kernels move the halves' bytes as they are; control flow runs
// its bodies' nodes, each by its own rule.)
constexpr bool computes_halves_in_f32(ir::OpFamily family) {
  return family == ir::OpFamily::sort || family == ir::OpFamily::reduce || family == ir::OpFamily::indexing ||
         family == ir::OpFamily::linalg || family == ir::OpFamily::collective || family == ir::OpFamily::window ||
         family == ir::OpFamily::conv;
}

// f32 buffers for halves_as_f32, kept per thread from call to call: a fresh
// zeroed std::vector per operand cost a bf16 1024^3 product more time in
// memset and page faults (7 ms) than its conversions. Each widened value
// takes the next slot; a kernel that runs another kernel (a collective's
// reduction) takes slots after its caller's.
thread_local size_t t_scratch_slots_in_use = 0;
float* f32_scratch(size_t slot, int64_t n) {
  struct Buffer {
    std::unique_ptr<float[]> data;
    int64_t size = 0;
  };
  thread_local std::vector<Buffer> buffers;
  if (buffers.size() <= slot) buffers.resize(slot + 1);
  Buffer& b = buffers[slot];
  if (b.size < n) {
    b.data.reset();  // the old one first: peak memory is one buffer, not two
    b.data.reset(new float[static_cast<size_t>(n)]);
    b.size = n;
  }
  return b.data.get();
}

// kernel k on a call whose half operands are widened to f32 and whose half
// results are computed in f32 and rounded to nearest even.
template <Kernel k>
void halves_as_f32(const KernelCall& call) {
  bool any = false;
  for (const KernelIn& in : call.inputs) any = any || ir::is_half(in.type->dtype);
  for (const KernelOut& out : call.outputs) any = any || ir::is_half(out.type->dtype);
  if (!any) return k(call);
  std::deque<ir::ValueType> types;  // stable addresses
  KernelCall wide{call.op, call.attrs, call.inputs, call.outputs};
  struct SlotsTaken {  // given back however the kernel exits
    size_t base = t_scratch_slots_in_use;
    ~SlotsTaken() { t_scratch_slots_in_use = base; }
  } taken;
  size_t slots = taken.base;
  float* buffer = nullptr;  // the last widened value's
  auto widen = [&](const ir::ValueType& t) {
    types.push_back(ir::ValueType{DType::f32, t.shape});
    buffer = f32_scratch(slots++, t.num_elements());
    t_scratch_slots_in_use = slots;
    return &types.back();
  };
  for (KernelIn& in : wide.inputs) {
    if (!ir::is_half(in.type->dtype)) continue;
    const DType d = in.type->dtype;
    in.type = widen(*in.type);
    float* w = buffer;
    ir::visit_element_type(d, [&](auto tag) {
      using H = typename decltype(tag)::type;
      if constexpr (ir::is_half_type<H>) {
        const H* h = static_cast<const H*>(in.data);
        parallel_ranges(in.type->num_elements(), [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) w[i] = static_cast<float>(h[i]);
        });
      }
    });
    in.data = w;
  }
  std::vector<size_t> rounded;  // the outputs to round back
  for (size_t o = 0; o < wide.outputs.size(); ++o) {
    KernelOut& out = wide.outputs[o];
    if (!ir::is_half(out.type->dtype)) continue;
    out.type = widen(*out.type);
    out.data = buffer;
    rounded.push_back(o);
  }
  k(wide);
  for (size_t o : rounded) {
    const float* f = static_cast<const float*>(wide.outputs[o].data);
    const int64_t n = wide.outputs[o].type->num_elements();
    ir::visit_element_type(call.outputs[o].type->dtype, [&](auto tag) {
      using H = typename decltype(tag)::type;
      if constexpr (ir::is_half_type<H>) {
        H* h = static_cast<H*>(call.outputs[o].data);
        parallel_ranges(n, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) h[i] = H(f[i]);
        });
      }
    });
  }
}

// The reduce and collective families' linear ops (reduce_sum, cumsum, psum,
// ...) act on each position of their operand alone: on complex values they
// are the same ops on the real and imaginary parts, which a trailing axis of
// 2 holds (std::complex's layout).
constexpr bool sums_complex_as_parts(ir::Op op) {
  return (ir::op_info(op).family == ir::OpFamily::reduce || ir::op_info(op).family == ir::OpFamily::collective) &&
         ir::op_info(op).linear;
}

// kernel k on a call whose complex operands and results are viewed as real
// arrays with a trailing axis of 2.
template <Kernel k>
void complex_as_parts(const KernelCall& call) {
  bool any = false;
  for (const KernelIn& in : call.inputs) any = any || ir::is_complex(in.type->dtype);
  if (!any) return k(call);
  std::deque<ir::ValueType> types;  // stable addresses
  auto parts = [&](const ir::ValueType* t) {
    if (!ir::is_complex(t->dtype)) return t;
    ir::ValueType p{ir::real_dtype(t->dtype), t->shape};
    p.shape.push_back(2);
    types.push_back(std::move(p));
    return static_cast<const ir::ValueType*>(&types.back());
  };
  KernelCall view{call.op, call.attrs, call.inputs, call.outputs};
  for (KernelIn& in : view.inputs) in.type = parts(in.type);
  for (KernelOut& out : view.outputs) out.type = parts(out.type);
  k(view);
}

}  // namespace

bool bf16_units_serve(const KernelCall& call) {
  const DType out = call.outputs[0].type->dtype;
  return call.inputs[0].type->dtype == DType::bf16 && call.inputs[1].type->dtype == DType::bf16 &&
         (out == DType::bf16 || out == DType::f32) && bf16_gemm_native();
}

namespace {

// dot_general and conv_general_dilated: bf16 products on the CPU's bf16
// instructions where it has them, else (and for the other halves) widened
// to f32 like their families.
void dot_general_with_halves(const KernelCall& call) {
  if (!dot_general_bf16_native(call)) halves_as_f32<&dot_general_kernel>(call);
}
void conv_general_dilated_with_halves(const KernelCall& call) {
  if (!conv_general_dilated_onednn(call)) halves_as_f32<&conv_general_dilated_kernel>(call);
}

KernelTable build_kernel_table() {
  KernelTable t{};
  // Filled from ops.def's `kernel` column: the op's own kernel or the elementwise loop.
#define GRAFT_KERNEL_OWN(ident)                                                                                 \
  (sums_complex_as_parts(Op::ident)                        ? &complex_as_parts<&halves_as_f32<&ident##_kernel>> \
   : computes_halves_in_f32(ir::op_info(Op::ident).family) ? &halves_as_f32<&ident##_kernel>                    \
                                                           : &ident##_kernel)
#define GRAFT_KERNEL_SCALAR(ident) elementwise_kernel(Op::ident)
#define GRAFT_KERNEL_VECTOR_MATH(ident) elementwise_kernel(Op::ident)
#define GRAFT_OP(ident, name, arity, family, dtypes, shape, jvp, linear, batch, kernel, ...) \
  t[static_cast<size_t>(Op::ident)] = GRAFT_KERNEL_##kernel(ident);
#include "ir/ops.def"
#undef GRAFT_OP
#undef GRAFT_KERNEL_OWN
#undef GRAFT_KERNEL_SCALAR
#undef GRAFT_KERNEL_VECTOR_MATH
  t[static_cast<size_t>(Op::dot_general)] = &dot_general_with_halves;
  t[static_cast<size_t>(Op::conv_general_dilated)] = &conv_general_dilated_with_halves;
  return t;
}

}  // namespace

namespace {
KernelTable& kernel_table() {
  static KernelTable table = build_kernel_table();
  return table;
}
}  // namespace

Kernel kernel_for(ir::Op op) { return kernel_table()[static_cast<size_t>(op)]; }

Kernel replace_kernel(ir::Op op, Kernel kernel) {
  return std::exchange(kernel_table()[static_cast<size_t>(op)], kernel);
}

void run_kernel(const KernelCall& call) {
  Kernel k = kernel_for(call.op);
  if (!k) throw UnsupportedError(std::string(ir::op_name(call.op)) + ": the interpreter has no kernel for this op yet");
  // Outputs with no elements need no work, and a kernel's index arithmetic
  // over the other axes of an empty shape (f32[0, 2^62, 4]) could overflow.
  // (A zero axis is looked for directly: this runs on every eager op, and
  // counting elements divides per axis to check for overflow.)
  bool all_empty = !call.outputs.empty();
  for (const KernelOut& out : call.outputs) {
    const Shape& s = out.type->shape;
    all_empty = all_empty && std::find(s.begin(), s.end(), int64_t{0}) != s.end();
  }
  if (all_empty) return;
  try {
    k(call);
  } catch (const UnsupportedError& e) {  // a kernel's refusal names its op
    const std::string_view name = ir::op_name(call.op);
    const std::string what = e.what();
    if (what.rfind(std::string(name), 0) == 0) throw;
    throw UnsupportedError(std::string(name) + ": " + what);
  }
}

}  // namespace graft::interpreter
