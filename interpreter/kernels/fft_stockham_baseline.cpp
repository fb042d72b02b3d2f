// The FFT kernel for baseline x86-64 (SSE2; also any other CPU).
// CMakeLists.txt gives this file its instruction set's flags; see fft_stockham_isa.h.
#define GRAFT_FFT_ISA FloatIsa::baseline
#define GRAFT_FFT_ISA_TABLE fft_kernels_baseline
#include "interpreter/kernels/fft_stockham_isa.h"
