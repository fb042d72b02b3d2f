// The float math table for baseline x86-64 (SSE2; also any other CPU).
// CMakeLists.txt gives this file its instruction set's flags; see float_math_isa.h.
#define GRAFT_FLOAT_ISA FloatIsa::baseline
#define GRAFT_FLOAT_ISA_TABLE float_math_table_baseline
#define GRAFT_FLOAT_ISA_EIGEN graft_eigen_baseline
#include "interpreter/kernels/float_math_isa.h"
