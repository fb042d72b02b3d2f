// The Eigen expressions of interpreter/kernels/elementwise.cpp, one function
// per op and float type, for generated kernels to call (see math.h).
#include "codegen/cpu/math.h"

#include <Eigen/Core>

namespace graft::codegen::cpu {
namespace {

template <class T>
using EVec = Eigen::Array<T, Eigen::Dynamic, 1>;
template <class T>
using CMap = Eigen::Map<const EVec<T>>;
template <class T>
using MMap = Eigen::Map<EVec<T>>;

// One function per op; the body is the interpreter's case verbatim.
#define GRAFT_CPU_MATH_DEF(name, expr)                            \
  template <class T>                                              \
  void name##_fn(const T* x, T* y, int64_t n) {                   \
    CMap<T> X(x, n);                                              \
    MMap<T> Y(y, n);                                              \
    Y = expr;                                                     \
  }
GRAFT_CPU_MATH_DEF(floor, X.floor())
GRAFT_CPU_MATH_DEF(ceil, X.ceil())
GRAFT_CPU_MATH_DEF(round, X.rint())
GRAFT_CPU_MATH_DEF(sqrt, X.sqrt())
GRAFT_CPU_MATH_DEF(rsqrt, X.rsqrt())
GRAFT_CPU_MATH_DEF(exp, X.exp())
GRAFT_CPU_MATH_DEF(log, X.log())
GRAFT_CPU_MATH_DEF(log1p, X.log1p())
GRAFT_CPU_MATH_DEF(expm1, X.expm1())
GRAFT_CPU_MATH_DEF(sin, X.sin())
GRAFT_CPU_MATH_DEF(cos, X.cos())
GRAFT_CPU_MATH_DEF(tan, X.tan())
GRAFT_CPU_MATH_DEF(asin, X.asin())
GRAFT_CPU_MATH_DEF(acos, X.acos())
GRAFT_CPU_MATH_DEF(atan, X.atan())
GRAFT_CPU_MATH_DEF(sinh, X.sinh())
GRAFT_CPU_MATH_DEF(cosh, X.cosh())
GRAFT_CPU_MATH_DEF(tanh, X.tanh())
GRAFT_CPU_MATH_DEF(logistic, T(1) / (T(1) + (-X).exp()))
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

std::optional<MathFn> math_fn_for(ir::Op op) {
  switch (op) {
#define GRAFT_CPU_MATH_CASE(name) \
  case ir::Op::name: return MathFn::name;
    GRAFT_CPU_MATH_FNS(GRAFT_CPU_MATH_CASE)
#undef GRAFT_CPU_MATH_CASE
    default: return std::nullopt;
  }
}

}  // namespace graft::codegen::cpu
