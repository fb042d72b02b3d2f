// Plans of graft's own FFT (fft_stockham.h): a length's radices with each
// stage's twiddle factors, and the twiddles of a long length's four-step
// split. Made once per length (in double, rounded to R) and kept.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "interpreter/kernels/fft_stockham.h"

namespace graft::interpreter {

// The largest prime factor a plan takes (as an O(p^2) butterfly).
inline constexpr int64_t kFftMaxRadix = 64;

// (cos, sin) of -2 pi r / q, in double, exact at multiples of pi / 2.
std::pair<double, double> root_of_unity(int64_t r, int64_t q);

template <class R>
struct FftPlan {
  FftPlanView<R> view;  // what the kernel reads: points into the members below
  std::vector<FftStageView<R>> stages;
  std::vector<std::vector<R>> tables;  // each stage's twiddles and roots
};

// The plan of length n (>= 2), or null when n has a prime factor above kFftMaxRadix.
template <class R>
const FftPlan<R>* fft_plan(int64_t n);

// (re, im) of W_n^(k1 j2) at [k1 n2 + j2], n = n1 n2: the twiddles between a four-step's passes.
template <class R>
const std::vector<R>& four_step_twiddles(int64_t n1, int64_t n2);

}  // namespace graft::interpreter
