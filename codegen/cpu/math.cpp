// The table generated modules receive: the interpreter's float math (see math.h).
#include "codegen/cpu/math.h"

namespace graft::codegen::cpu {

const MathTable& math_table() {
  static const MathTable table{kMathTableVersion, interpreter::kFloatFnCount, interpreter::float_math().f32,
                               interpreter::float_math().f64};
  return table;
}

}  // namespace graft::codegen::cpu
