// The FFT kernel for AVX2 + FMA (compiled with -mavx2 -mfma).
// CMakeLists.txt gives this file its instruction set's flags; see fft_stockham_isa.h.
#define GRAFT_FFT_ISA FloatIsa::avx2
#define GRAFT_FFT_ISA_TABLE fft_kernels_avx2
#include "interpreter/kernels/fft_stockham_isa.h"
