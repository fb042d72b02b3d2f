// graft's own FFT kernel: a Stockham autosort transform of a block of lines
// at once, one line per vector lane. The lines of a block are gathered into
// split real and imaginary arrays of n x kFftLanes values, so that every
// butterfly of every stage is the same arithmetic on all lanes: the stage
// loops are plain vector loops of at least one full register. The kernel is
// built once per instruction set (fft_stockham_<isa>.cpp, each including
// fft_stockham_isa.h with its own -m flags) and chosen with the float math
// table (float_math(): $GRAFT_FLOAT_MATH picks it too). Its loops contract
// nothing, so every instruction set gives the same bits.
//
// Stage s of radix p, with l the product of the radices before it and
// q = n / l, m = q / p: sub-transform j of length q (j < l) holds its input
// at A[t l + j]; it becomes p transforms of length m, X[k + p k'] of the
// q-point transform being the m-point transform over t of
// W_q^(t k) sum_u A[(t + m u) l + j] W_p^(u k), stored at B[(t p + k) l + j].
// After the last stage the outputs are in natural order.
#pragma once

#include <cstdint>
#include <vector>

#include "interpreter/kernels/float_math.h"

namespace graft::interpreter {

// The lanes of one block: one 64-byte register of R.
template <class R>
inline constexpr int kFftLanes = static_cast<int>(64 / sizeof(R));

// One stage of a plan (see above).
template <class R>
struct FftStageView {
  int radix;
  int64_t l, m;
  const R* twiddle;  // (re, im) of W_q^(t k), t < m, 1 <= k < radix: m x (radix - 1) pairs
  const R* root;     // (re, im) of W_p^k, k < radix (the generic odd radix)
};

// The stages of a transform of length n, in the order they run.
template <class R>
struct FftPlanView {
  int64_t n;
  int stages;
  const FftStageView<R>* stage;
};

// Where a block's lines are read and written: element j of lane v at
// x[lane[v] + j * step] (complex elements, interleaved (re, im) pairs).
template <class R>
struct FftLaneBlock {
  const R* src;
  const int64_t* src_lane;  // kFftLanes<R> offsets; those of lanes >= `lanes` are not read
  int64_t src_step;
  int64_t src_spacing;  // when > 0, src_lane[v] == src_lane[0] + v src_spacing (1: adjacent lanes)
  R* dst;
  const int64_t* dst_lane;
  int64_t dst_step;
  int64_t dst_spacing;
  int lanes;             // lines in the block, <= kFftLanes<R>
  R scale;               // each output times this (1 / n for an inverse)
  const R* dst_twiddle;  // when set, each output times this (conjugated when inverse), indexed as dst
  R* work;               // 4 n kFftLanes<R> values
};

// Transforms one block (inverse: W^-1 in every butterfly). src and dst may be the same lines.
template <class R>
using FftBlockFn = void (*)(const FftPlanView<R>& plan, const FftLaneBlock<R>& block, bool inverse);

// The kernel of one instruction set.
struct FftKernels {
  FloatIsa isa;
  FftBlockFn<float> f32;
  FftBlockFn<double> f64;
};

const FftKernels& fft_kernels();                   // of float_math()'s instruction set
std::vector<const FftKernels*> fft_kernel_sets();  // every instruction set's this CPU runs, narrowest first

}  // namespace graft::interpreter
