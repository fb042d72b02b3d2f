// The vectorised float functions: what the interpreter's elementwise kernels
// compute for these ops, and what generated CPU kernels call back into graft
// for (codegen/cpu/math.h), so that both compute the same bits.
//
// The functions are those of the ops whose ops.def `kernel` column says
// VECTOR_MATH; each is an Eigen array expression (float_math_isa.h, one
// per op), except f32 exp, sin and cos, which are graft's own formulas
// (float_math_f32.h, about twice as fast). The table is compiled three times
// (float_math_baseline.cpp, _avx2.cpp, _avx512.cpp, each with its
// instruction set's flags); the table of the widest instruction set this CPU
// has is chosen at first use (float_math()).
//
// Results do not depend on where an element lies in the array: every
// element goes through Eigen's packet formula (a partial last packet is
// computed in a padded buffer), or graft's per-element formula, so an op
// gives the same bits whether it runs eagerly on a whole array, on a fused
// kernel's tile, or in a generated kernel's block. They do depend on the
// instruction set (a 16-lane AVX-512 polynomial and a 4-lane SSE one may
// round differently; fma or not): one machine, one table, the same bits
// everywhere. Accuracy (max ULP error against a correctly rounded reference)
// is tested per table in tests/float_math/float_math_test.cpp and listed in
// docs/FLOAT_MATH.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/op.h"

namespace graft::interpreter {

// The VECTOR_MATH ops of ops.def, in its order.
enum class FloatFn : int32_t {
#define GRAFT_FLOAT_FN_OWN(ident)
#define GRAFT_FLOAT_FN_SCALAR(ident)
#define GRAFT_FLOAT_FN_VECTOR_MATH(ident) ident,
#define GRAFT_OP(ident, name, arity, family, dtypes, shape, jvp, linear, batch, kernel, ...) GRAFT_FLOAT_FN_##kernel(ident)
#include "ir/ops.def"
#undef GRAFT_OP
#undef GRAFT_FLOAT_FN_OWN
#undef GRAFT_FLOAT_FN_SCALAR
#undef GRAFT_FLOAT_FN_VECTOR_MATH
  count
};
inline constexpr int kFloatFnCount = static_cast<int>(FloatFn::count);

// The function computing op (ir::Op of the same name), or nullopt for an op
// the table does not hold. Both backends map ops through this.
std::optional<FloatFn> float_fn_of(ir::Op op);
ir::Op op_of(FloatFn fn);  // the inverse
const char* float_fn_name(FloatFn fn);  // the op's name

using FloatFnF32 = void (*)(const float* x, float* y, int64_t n);  // y[i] = f(x[i]), i < n; y may be x
using FloatFnF64 = void (*)(const double* x, double* y, int64_t n);

// The instruction sets a table is built for, narrowest first.
enum class FloatIsa : int32_t { baseline, avx2, avx512 };
inline constexpr int kFloatIsaCount = 3;
const char* float_isa_name(FloatIsa isa);  // "baseline x86-64 (SSE2)", "AVX2+FMA", "AVX-512"

// IEEE arithmetic (exact, so the same bits in every table), at the table's
// vector width: what the interpreter's add, sub, mul and div run on floats.
enum class FloatArith : int32_t { add, sub, mul, div, count };
using FloatArithF32 = void (*)(const float* a, const float* b, float* y, int64_t n);  // y may be a or b
using FloatArithF64 = void (*)(const double* a, const double* b, double* y, int64_t n);

struct FloatMathTable {
  FloatIsa isa;
  FloatFnF32 f32[kFloatFnCount];
  FloatFnF64 f64[kFloatFnCount];
  FloatArithF32 arith_f32[static_cast<int>(FloatArith::count)];
  FloatArithF64 arith_f64[static_cast<int>(FloatArith::count)];
};

// The table this process uses: the widest instruction set the CPU has, or
// the one $GRAFT_FLOAT_MATH names (baseline | avx2 | avx512; one the CPU
// lacks is refused with a warning). Chosen once.
const FloatMathTable& float_math();

// Every table built into this library that this CPU can run, narrowest
// first (for tests and benchmarks).
std::vector<const FloatMathTable*> float_math_tables();

}  // namespace graft::interpreter
