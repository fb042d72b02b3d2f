// The float math table for AVX-512 F/BW/VL/DQ (compiled with -mavx512f -mavx512bw -mavx512vl -mavx512dq).
// CMakeLists.txt gives this file its instruction set's flags; see float_math_isa.h.
#define GRAFT_FLOAT_ISA FloatIsa::avx512
#define GRAFT_FLOAT_ISA_TABLE float_math_table_avx512
#define GRAFT_FLOAT_ISA_EIGEN graft_eigen_avx512
#include "interpreter/kernels/float_math_isa.h"
