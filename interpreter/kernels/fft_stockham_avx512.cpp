// The FFT kernel for AVX-512 F/BW/VL/DQ (compiled with -mavx512f -mavx512bw -mavx512vl -mavx512dq).
// CMakeLists.txt gives this file its instruction set's flags; see fft_stockham_isa.h.
#define GRAFT_FFT_ISA FloatIsa::avx512
#define GRAFT_FFT_ISA_TABLE fft_kernels_avx512
#include "interpreter/kernels/fft_stockham_isa.h"
