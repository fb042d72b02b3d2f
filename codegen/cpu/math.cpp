// The Eigen expressions of interpreter/kernels/float_math.h, one function per
// op and float type, for generated kernels to call (see math.h).
#include "codegen/cpu/math.h"

#include "interpreter/kernels/float_math.h"

namespace graft::codegen::cpu {
namespace {

using interpreter::CMap;
using interpreter::MMap;

// One function per op, from the interpreter's own list of expressions.
#define GRAFT_CPU_MATH_DEF(name, expr)          \
  template <class T>                            \
  void name##_fn(const T* x, T* y, int64_t n) { \
    CMap<T> X(x, n);                            \
    MMap<T> Y(y, n);                            \
    Y = expr;                                   \
  }
GRAFT_FLOAT_MATH_OPS(GRAFT_CPU_MATH_DEF)
#undef GRAFT_CPU_MATH_DEF

#define GRAFT_CPU_MATH_F32(name) &name##_fn<float>,
#define GRAFT_CPU_MATH_F64(name) &name##_fn<double>,
const MathF32 kF32[] = {GRAFT_CPU_MATH_FNS(GRAFT_CPU_MATH_F32)};
const MathF64 kF64[] = {GRAFT_CPU_MATH_FNS(GRAFT_CPU_MATH_F64)};
#undef GRAFT_CPU_MATH_F32
#undef GRAFT_CPU_MATH_F64
static_assert(sizeof(kF32) / sizeof(kF32[0]) == static_cast<size_t>(MathFn::count));

}  // namespace

const MathTable& math_table() {
  static const MathTable table{kMathTableVersion, static_cast<int32_t>(MathFn::count), kF32, kF64};
  return table;
}

}  // namespace graft::codegen::cpu
