// The float math table for AVX2 + FMA (compiled with -mavx2 -mfma).
// CMakeLists.txt gives this file its instruction set's flags; see float_math_isa.h.
#define GRAFT_FLOAT_ISA FloatIsa::avx2
#define GRAFT_FLOAT_ISA_TABLE float_math_table_avx2
#define GRAFT_FLOAT_ISA_EIGEN graft_eigen_avx2
#include "interpreter/kernels/float_math_isa.h"
