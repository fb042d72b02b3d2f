// The body of one instruction set's FFT kernel (fft_stockham.h): included
// once by fft_stockham_baseline.cpp, fft_stockham_avx2.cpp and
// fft_stockham_avx512.cpp, each compiled with its own -m flags, after
// defining GRAFT_FFT_ISA (its FloatIsa) and GRAFT_FFT_ISA_TABLE (the name of
// the function returning its kernels).
//
// Everything here lives in an anonymous namespace and calls no inline
// function from elsewhere (no std::complex, no containers): the linker could
// otherwise hand one object's AVX-512 copy of a shared inline function to a
// baseline caller (tests/float_math/check_isolated.cmake checks it).
#pragma once

#include <cstdint>

#include "interpreter/kernels/fft_stockham.h"

namespace graft::interpreter {
namespace {

// sin(2 pi / 3), cos and sin of 2 pi / 5 and 4 pi / 5.
constexpr double kSin3 = 0.86602540378443864676;
constexpr double kCos5a = 0.30901699437494742410, kSin5a = 0.95105651629515357212;
constexpr double kCos5b = -0.80901699437494742410, kSin5b = 0.58778525229247312917;

// y *= (wr, wi) for every lane of a run of `len`.
template <class R>
inline void twiddle_run(R* __restrict yr, R* __restrict yi, int64_t len, R wr, R wi) {
#pragma GCC ivdep
  for (int64_t u = 0; u < len; ++u) {
    const R a = yr[u], b = yi[u];
    yr[u] = a * wr - b * wi;
    yi[u] = a * wi + b * wr;
  }
}

// r = a w with w = (wr, wi): one twiddle, fused into a butterfly's store.
#define GRAFT_FFT_TWIDDLE(re, im, wr, wi) \
  do {                                    \
    const R a_ = (re), b_ = (im);         \
    (re) = a_ * (wr)-b_ * (wi);           \
    (im) = a_ * (wi) + b_ * (wr);         \
  } while (0)

// The butterflies of one t of a stage of radix 2, 3, 4 or 5 (see
// fft_stockham.h) over a run of len = l * lanes contiguous values, each
// output k > 0 times W_q^(t k) = w[k - 1] (Tw; none at t = 0). Inv flips the
// sign of every root.
template <class R, int P, bool Inv, bool Tw, int64_t FixedLen = 0>
inline void butterflies(const R* __restrict ar, const R* __restrict ai, R* __restrict br, R* __restrict bi, int64_t run,
                        int64_t m, int64_t t, const R* wr, const R* wi) {
  const int64_t len = FixedLen ? FixedLen : run;  // a first stage's runs are one register: no loop
  const R sign = Inv ? R(1) : R(-1);              // the imaginary part of W's direction: W_p = cos - i sin forward
  const R* __restrict x0r = ar + t * len;
  const R* __restrict x0i = ai + t * len;
  const R* __restrict x1r = ar + (t + m) * len;
  const R* __restrict x1i = ai + (t + m) * len;
  R* __restrict y0r = br + (t * P) * len;
  R* __restrict y0i = bi + (t * P) * len;
  R* __restrict y1r = br + (t * P + 1) * len;
  R* __restrict y1i = bi + (t * P + 1) * len;
  const R w1r = wr[0], w1i = wi[0];
  if constexpr (P == 2) {
#pragma GCC ivdep
    for (int64_t u = 0; u < len; ++u) {
      const R a0r = x0r[u], a0i = x0i[u], a1r = x1r[u], a1i = x1i[u];
      R z1r = a0r - a1r, z1i = a0i - a1i;
      if constexpr (Tw) GRAFT_FFT_TWIDDLE(z1r, z1i, w1r, w1i);
      y0r[u] = a0r + a1r;
      y0i[u] = a0i + a1i;
      y1r[u] = z1r;
      y1i[u] = z1i;
    }
  } else if constexpr (P == 3) {
    const R* __restrict x2r = ar + (t + 2 * m) * len;
    const R* __restrict x2i = ai + (t + 2 * m) * len;
    R* __restrict y2r = br + (t * P + 2) * len;
    R* __restrict y2i = bi + (t * P + 2) * len;
    const R w2r = wr[1], w2i = wi[1];
    const R sn = sign * R(kSin3);
#pragma GCC ivdep
    for (int64_t u = 0; u < len; ++u) {
      const R a0r = x0r[u], a0i = x0i[u];
      const R sr = x1r[u] + x2r[u], si = x1i[u] + x2i[u];
      const R dr = x1r[u] - x2r[u], di = x1i[u] - x2i[u];
      const R mr = a0r - R(0.5) * sr, mi = a0i - R(0.5) * si;
      // z1 = m + i sn d, z2 = m - i sn d
      R z1r = mr - sn * di, z1i = mi + sn * dr;
      R z2r = mr + sn * di, z2i = mi - sn * dr;
      if constexpr (Tw) {
        GRAFT_FFT_TWIDDLE(z1r, z1i, w1r, w1i);
        GRAFT_FFT_TWIDDLE(z2r, z2i, w2r, w2i);
      }
      y0r[u] = a0r + sr;
      y0i[u] = a0i + si;
      y1r[u] = z1r;
      y1i[u] = z1i;
      y2r[u] = z2r;
      y2i[u] = z2i;
    }
  } else if constexpr (P == 4) {
    const R* __restrict x2r = ar + (t + 2 * m) * len;
    const R* __restrict x2i = ai + (t + 2 * m) * len;
    const R* __restrict x3r = ar + (t + 3 * m) * len;
    const R* __restrict x3i = ai + (t + 3 * m) * len;
    R* __restrict y2r = br + (t * P + 2) * len;
    R* __restrict y2i = bi + (t * P + 2) * len;
    R* __restrict y3r = br + (t * P + 3) * len;
    R* __restrict y3i = bi + (t * P + 3) * len;
    const R w2r = wr[1], w2i = wi[1], w3r = wr[2], w3i = wi[2];
#pragma GCC ivdep
    for (int64_t u = 0; u < len; ++u) {
      const R t0r = x0r[u] + x2r[u], t0i = x0i[u] + x2i[u];
      const R t1r = x0r[u] - x2r[u], t1i = x0i[u] - x2i[u];
      const R t2r = x1r[u] + x3r[u], t2i = x1i[u] + x3i[u];
      const R t3r = x1r[u] - x3r[u], t3i = x1i[u] - x3i[u];
      // z1 = t1 + i sign t3, z3 = t1 - i sign t3 (forward: W_4 = -i)
      R z1r = t1r - sign * t3i, z1i = t1i + sign * t3r;
      R z2r = t0r - t2r, z2i = t0i - t2i;
      R z3r = t1r + sign * t3i, z3i = t1i - sign * t3r;
      if constexpr (Tw) {
        GRAFT_FFT_TWIDDLE(z1r, z1i, w1r, w1i);
        GRAFT_FFT_TWIDDLE(z2r, z2i, w2r, w2i);
        GRAFT_FFT_TWIDDLE(z3r, z3i, w3r, w3i);
      }
      y0r[u] = t0r + t2r;
      y0i[u] = t0i + t2i;
      y1r[u] = z1r;
      y1i[u] = z1i;
      y2r[u] = z2r;
      y2i[u] = z2i;
      y3r[u] = z3r;
      y3i[u] = z3i;
    }
  } else {
    static_assert(P == 5);
    const R* __restrict x2r = ar + (t + 2 * m) * len;
    const R* __restrict x2i = ai + (t + 2 * m) * len;
    const R* __restrict x3r = ar + (t + 3 * m) * len;
    const R* __restrict x3i = ai + (t + 3 * m) * len;
    const R* __restrict x4r = ar + (t + 4 * m) * len;
    const R* __restrict x4i = ai + (t + 4 * m) * len;
    R* __restrict y2r = br + (t * P + 2) * len;
    R* __restrict y2i = bi + (t * P + 2) * len;
    R* __restrict y3r = br + (t * P + 3) * len;
    R* __restrict y3i = bi + (t * P + 3) * len;
    R* __restrict y4r = br + (t * P + 4) * len;
    R* __restrict y4i = bi + (t * P + 4) * len;
    const R w2r = wr[1], w2i = wi[1], w3r = wr[2], w3i = wi[2], w4r = wr[3], w4i = wi[3];
    const R c1 = R(kCos5a), c2 = R(kCos5b), s1 = sign * R(kSin5a), s2 = sign * R(kSin5b);
#pragma GCC ivdep
    for (int64_t u = 0; u < len; ++u) {
      const R a0r = x0r[u], a0i = x0i[u];
      const R t1r = x1r[u] + x4r[u], t1i = x1i[u] + x4i[u];
      const R t2r = x2r[u] + x3r[u], t2i = x2i[u] + x3i[u];
      const R d1r = x1r[u] - x4r[u], d1i = x1i[u] - x4i[u];
      const R d2r = x2r[u] - x3r[u], d2i = x2i[u] - x3i[u];
      const R b1r = a0r + c1 * t1r + c2 * t2r, b1i = a0i + c1 * t1i + c2 * t2i;
      const R b2r = a0r + c2 * t1r + c1 * t2r, b2i = a0i + c2 * t1i + c1 * t2i;
      const R e1r = s1 * d1r + s2 * d2r, e1i = s1 * d1i + s2 * d2i;
      const R e2r = s2 * d1r - s1 * d2r, e2i = s2 * d1i - s1 * d2i;
      // z1 = b1 + i e1, z4 = b1 - i e1, z2 = b2 + i e2, z3 = b2 - i e2 (e carries the sign)
      R z1r = b1r - e1i, z1i = b1i + e1r;
      R z4r = b1r + e1i, z4i = b1i - e1r;
      R z2r = b2r - e2i, z2i = b2i + e2r;
      R z3r = b2r + e2i, z3i = b2i - e2r;
      if constexpr (Tw) {
        GRAFT_FFT_TWIDDLE(z1r, z1i, w1r, w1i);
        GRAFT_FFT_TWIDDLE(z2r, z2i, w2r, w2i);
        GRAFT_FFT_TWIDDLE(z3r, z3i, w3r, w3i);
        GRAFT_FFT_TWIDDLE(z4r, z4i, w4r, w4i);
      }
      y0r[u] = a0r + t1r + t2r;
      y0i[u] = a0i + t1i + t2i;
      y1r[u] = z1r;
      y1i[u] = z1i;
      y2r[u] = z2r;
      y2i[u] = z2i;
      y3r[u] = z3r;
      y3i[u] = z3i;
      y4r[u] = z4r;
      y4i[u] = z4i;
    }
  }
}

// One stage of radix 2, 3, 4 or 5.
template <class R, int P, bool Inv>
void stage_fixed(const FftStageView<R>& s, const R* ar, const R* ai, R* br, R* bi) {
  const int64_t len = s.l * kFftLanes<R>, m = s.m;
  R wr[P] = {}, wi[P] = {};
  butterflies<R, P, Inv, false>(ar, ai, br, bi, len, m, 0, wr, wi);
  for (int64_t t = 1; t < m; ++t) {
    const R* w = s.twiddle + 2 * t * (P - 1);
    for (int k = 0; k < P - 1; ++k) {
      wr[k] = w[2 * k];
      wi[k] = Inv ? -w[2 * k + 1] : w[2 * k + 1];
    }
    if (s.l == 1)
      butterflies<R, P, Inv, true, kFftLanes<R>>(ar, ai, br, bi, len, m, t, wr, wi);
    else
      butterflies<R, P, Inv, true>(ar, ai, br, bi, len, m, t, wr, wi);
  }
}

// A stage of any other radix p: y_k = sum_u x_u W_p^(u k), O(p^2) per butterfly.
template <class R, bool Inv>
void stage_generic(const FftStageView<R>& s, const R* __restrict ar, const R* __restrict ai, R* __restrict br,
                   R* __restrict bi) {
  const int p = s.radix;
  const int64_t len = s.l * kFftLanes<R>, m = s.m;
  for (int64_t t = 0; t < m; ++t) {
    for (int k = 0; k < p; ++k) {
      R* __restrict yr = br + (t * p + k) * len;
      R* __restrict yi = bi + (t * p + k) * len;
      const R* __restrict x0r = ar + t * len;
      const R* __restrict x0i = ai + t * len;
#pragma GCC ivdep
      for (int64_t v = 0; v < len; ++v) {
        yr[v] = x0r[v];
        yi[v] = x0i[v];
      }
      for (int u = 1; u < p; ++u) {
        const int64_t e = (static_cast<int64_t>(u) * k) % p;
        const R cr = s.root[2 * e], ci = Inv ? -s.root[2 * e + 1] : s.root[2 * e + 1];
        const R* __restrict xr = ar + (t + u * m) * len;
        const R* __restrict xi = ai + (t + u * m) * len;
#pragma GCC ivdep
        for (int64_t v = 0; v < len; ++v) {
          yr[v] += xr[v] * cr - xi[v] * ci;
          yi[v] += xr[v] * ci + xi[v] * cr;
        }
      }
      if (t > 0 && k > 0) {
        const R* w = s.twiddle + 2 * (t * (p - 1) + k - 1);
        twiddle_run(yr, yi, len, w[0], Inv ? -w[1] : w[1]);
      }
    }
  }
}

template <class R, bool Inv>
void run_stage(const FftStageView<R>& s, const R* ar, const R* ai, R* br, R* bi) {
  switch (s.radix) {
    case 2: return stage_fixed<R, 2, Inv>(s, ar, ai, br, bi);
    case 3: return stage_fixed<R, 3, Inv>(s, ar, ai, br, bi);
    case 4: return stage_fixed<R, 4, Inv>(s, ar, ai, br, bi);
    case 5: return stage_fixed<R, 5, Inv>(s, ar, ai, br, bi);
    default: return stage_generic<R, Inv>(s, ar, ai, br, bi);
  }
}

// Elements of each lane a strided gather or scatter moves at a time.
constexpr int64_t kTile = 32;
// Rows an adjacent-lane gather or scatter prefetches ahead.
constexpr int64_t kAhead = 8;

// The block's lines into split arrays re[j * lanes + v], im[...]; absent lanes are zero.
template <class R>
void gather(const FftLaneBlock<R>& b, int64_t n, R* __restrict re, R* __restrict im) {
  constexpr int V = kFftLanes<R>;
  if (b.lanes < V)
    for (int64_t i = 0; i < n * V; ++i) re[i] = im[i] = R(0);
  const R* __restrict x0 = b.src + 2 * b.src_lane[0];
  const int64_t step = 2 * b.src_step;
  if (b.lanes == V && b.src_spacing == 1) {
    for (int64_t j = 0; j < n; ++j) {
      const R* __restrict x = x0 + j * step;
      // Rows far apart defeat the hardware's prefetcher: fetch kAhead rows ahead.
      if (j + kAhead < n) {
        __builtin_prefetch(x + kAhead * step);
        __builtin_prefetch(x + kAhead * step + 2 * V - 1);
      }
#pragma GCC ivdep
      for (int v = 0; v < V; ++v) {
        re[j * V + v] = x[2 * v];
        im[j * V + v] = x[2 * v + 1];
      }
    }
  } else {
    // Lanes apart (whole lines side by side): a tile of kTile elements of each
    // lane at a time, so that the stores stay in L1.
    for (int64_t j0 = 0; j0 < n; j0 += kTile) {
      const int64_t j1 = j0 + kTile < n ? j0 + kTile : n;
      for (int v = 0; v < b.lanes; ++v) {
        const R* __restrict x = b.src + 2 * b.src_lane[v];
        for (int64_t j = j0; j < j1; ++j) {
          re[j * V + v] = x[j * step];
          im[j * V + v] = x[j * step + 1];
        }
      }
    }
  }
}

// The split arrays out to the block's lines, each value times scale and, when
// the block has them, its twiddle.
template <class R, bool Inv>
void scatter(const FftLaneBlock<R>& b, int64_t n, const R* __restrict re, const R* __restrict im) {
  constexpr int V = kFftLanes<R>;
  const R scale = b.scale;
  const int64_t step = 2 * b.dst_step, o0 = 2 * b.dst_lane[0];
  if (b.lanes == V && b.dst_spacing == 1) {
    for (int64_t j = 0; j < n; ++j) {
      R* __restrict y = b.dst + o0 + j * step;
      if (j + kAhead < n) {
        __builtin_prefetch(y + kAhead * step, 1);
        __builtin_prefetch(y + kAhead * step + 2 * V - 1, 1);
      }
      const R* __restrict r = re + j * V;
      const R* __restrict i = im + j * V;
      if (b.dst_twiddle) {
        const R* __restrict w = b.dst_twiddle + o0 + j * step;
#pragma GCC ivdep
        for (int v = 0; v < V; ++v) {
          const R wr = w[2 * v], wi = Inv ? -w[2 * v + 1] : w[2 * v + 1];
          y[2 * v] = (r[v] * wr - i[v] * wi) * scale;
          y[2 * v + 1] = (r[v] * wi + i[v] * wr) * scale;
        }
      } else {
#pragma GCC ivdep
        for (int v = 0; v < V; ++v) {
          y[2 * v] = r[v] * scale;
          y[2 * v + 1] = i[v] * scale;
        }
      }
    }
    return;
  }
  for (int64_t j0 = 0; j0 < n; j0 += kTile) {  // tiles, as gather's
    const int64_t j1 = j0 + kTile < n ? j0 + kTile : n;
    for (int v = 0; v < b.lanes; ++v) {
      for (int64_t j = j0; j < j1; ++j) {
        const int64_t at = 2 * b.dst_lane[v] + j * step;
        R xr = re[j * V + v], xi = im[j * V + v];
        if (b.dst_twiddle) {
          const R wr = b.dst_twiddle[at], wi = Inv ? -b.dst_twiddle[at + 1] : b.dst_twiddle[at + 1];
          const R a = xr * wr - xi * wi, c = xr * wi + xi * wr;
          xr = a;
          xi = c;
        }
        b.dst[at] = xr * scale;
        b.dst[at + 1] = xi * scale;
      }
    }
  }
}

template <class R, bool Inv>
void run_block_dir(const FftPlanView<R>& plan, const FftLaneBlock<R>& b) {
  constexpr int V = kFftLanes<R>;
  const int64_t n = plan.n;
  R* re = b.work;
  R* im = re + n * V;
  R* sre = im + n * V;
  R* sim = sre + n * V;
  gather(b, n, re, im);
  for (int s = 0; s < plan.stages; ++s) {
    run_stage<R, Inv>(plan.stage[s], re, im, sre, sim);
    R* tr = re;
    re = sre;
    sre = tr;
    R* ti = im;
    im = sim;
    sim = ti;
  }
  scatter<R, Inv>(b, n, re, im);
}

template <class R>
void run_block(const FftPlanView<R>& plan, const FftLaneBlock<R>& b, bool inverse) {
  if (inverse)
    run_block_dir<R, true>(plan, b);
  else
    run_block_dir<R, false>(plan, b);
}

#undef GRAFT_FFT_TWIDDLE

}  // namespace

const FftKernels& GRAFT_FFT_ISA_TABLE() {
  static const FftKernels kernels{GRAFT_FFT_ISA, &run_block<float>, &run_block<double>};
  return kernels;
}

}  // namespace graft::interpreter
