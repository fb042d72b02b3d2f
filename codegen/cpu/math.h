// Float functions that generated CPU kernels call back into graft for: the
// interpreter's float math table (interpreter/kernels/float_math.h), so a
// kernel computes exactly the interpreter's bits for exp, tanh, logistic, ...
// with the widest instruction set this CPU has. The generated module gets
// the table when it is loaded; which op calls which function: op_math_fn in
// elementwise.cpp.
#pragma once

#include <cstdint>

#include "interpreter/kernels/float_math.h"

namespace graft::codegen::cpu {

using MathFn = interpreter::FloatFn;

// Bumped whenever the table's layout or meaning changes; generated modules
// check it when they are loaded (and it is part of their source, so of the
// cache key). 2: functions from the instruction-set table, position-independent;
// 3: indexed by the VECTOR_MATH ops in ops.def order; 4: with bessel_i0e,
// bessel_i1e and ndtri; 5: with erfc, ndtr and log_ndtr too.
inline constexpr int32_t kMathTableVersion = 5;

using MathF32 = interpreter::FloatFnF32;
using MathF64 = interpreter::FloatFnF64;

// Layout mirrored by `gcg_math_table` in the generated prelude.
struct MathTable {
  int32_t version;
  int32_t count;
  const MathF32* f32;  // indexed by MathFn
  const MathF64* f64;
};

const MathTable& math_table();

}  // namespace graft::codegen::cpu
