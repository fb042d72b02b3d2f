// Which FFT kernel runs: the one built for the float math table's instruction set.
#include "interpreter/kernels/fft_stockham.h"

namespace graft::interpreter {

// fft_stockham_<isa>.cpp; the AVX kernels are built on x86-64 only (GRAFT_FLOAT_MATH_X86).
const FftKernels& fft_kernels_baseline();
#ifdef GRAFT_FLOAT_MATH_X86
const FftKernels& fft_kernels_avx2();
const FftKernels& fft_kernels_avx512();
#endif

namespace {

// The kernel built for `isa` (the float math tables list only instruction sets this build and CPU have).
const FftKernels& kernels_of(FloatIsa isa) {
  switch (isa) {
#ifdef GRAFT_FLOAT_MATH_X86
    case FloatIsa::avx2: return fft_kernels_avx2();
    case FloatIsa::avx512: return fft_kernels_avx512();
#endif
    default: return fft_kernels_baseline();
  }
}

}  // namespace

const FftKernels& fft_kernels() {
  static const FftKernels& chosen = kernels_of(float_math().isa);
  return chosen;
}

std::vector<const FftKernels*> fft_kernel_sets() {
  std::vector<const FftKernels*> out;
  for (const FloatMathTable* t : float_math_tables()) out.push_back(&kernels_of(t->isa));
  return out;
}

}  // namespace graft::interpreter
