// Float functions that generated CPU kernels call back into graft for.
//
// The interpreter computes these ops with Eigen's vectorised array functions
// (interpreter/kernels/elementwise.cpp), which are not libm: exp, log, tanh,
// ... are Eigen polynomials, and with EIGEN_FAST_MATH even f32 sqrt is an
// rsqrt estimate plus a Newton step. Which formula an element gets also
// depends on its position: elements in a full SIMD packet take the packet
// path, the last n % packet elements the scalar one. To give exactly the
// interpreter's bits, a kernel calls these functions (compiled in graft, with
// graft's flags, from the same Eigen expressions) on packet-aligned stretches
// of its iteration space; see codegen/cpu/emit.cpp.
//
// Which op calls which function: op_math_fn in elementwise.cpp. The
// functions are float_math.h's expressions (tests/codegen checks bit equality).
#pragma once

#include <cstdint>

namespace graft::codegen::cpu {

#define GRAFT_CPU_MATH_FNS(X) \
  X(floor) X(ceil) X(round) X(sqrt) X(rsqrt) X(exp) X(log) X(log1p) X(expm1) X(sin) X(cos) X(tan) X(asin) \
  X(acos) X(atan) X(sinh) X(cosh) X(tanh) X(logistic)

enum class MathFn : int32_t {
#define GRAFT_CPU_MATH_ENUM(name) name,
  GRAFT_CPU_MATH_FNS(GRAFT_CPU_MATH_ENUM)
#undef GRAFT_CPU_MATH_ENUM
  count
};

// Bumped whenever the table's layout or meaning changes; generated modules
// check it when they are loaded (and it is part of their source, so of the
// cache key).
inline constexpr int32_t kMathTableVersion = 1;

using MathF32 = void (*)(const float* x, float* y, int64_t n);   // y[i] = f(x[i]), i < n
using MathF64 = void (*)(const double* x, double* y, int64_t n);

// Layout mirrored by `gcg_math_table` in the generated prelude.
struct MathTable {
  int32_t version;
  int32_t count;
  const MathF32* f32;  // indexed by MathFn
  const MathF64* f64;
};

const MathTable& math_table();

}  // namespace graft::codegen::cpu
