// CPU kernel of the fft family: lax.fft's transforms over the trailing axes,
// one axis at a time. Lines whose length has no prime factor above
// kFftMaxRadix run on graft's own Stockham kernel (fft_stockham.h), a block
// of lines to a vector register's lanes, the blocks split among threads;
// lines longer than kBlockMaxLen in four steps; other lengths by Bluestein's
// algorithm on that kernel. Real transforms of even length are
// complex transforms of half the length. The inverse transforms scale by
// 1/n, as JAX's.
#include <algorithm>
#include <cmath>
#include <complex>
#include <memory>
#include <vector>

#include "interpreter/kernels/fft_plan.h"
#include "interpreter/kernels/fft_stockham.h"
#include "interpreter/kernels/loops.h"
#include "ir/fft_type.h"
#include "runtime/buffer.h"
#include "runtime/device.h"

namespace graft::interpreter {
namespace {

using ir::FftType;

// The layout of one axis of a row-major shape: lines of `len` elements, `stride` apart.
struct AxisLines {
  int64_t outer, len, stride;  // outer * stride lines in all
  int64_t lines() const { return outer * stride; }
  int64_t base(int64_t line) const { return (line / stride) * len * stride + line % stride; }
};

AxisLines lines_of(const Shape& shape, int axis) {
  AxisLines a{1, shape[static_cast<size_t>(axis)], 1};
  for (int d = 0; d < axis; ++d) a.outer *= shape[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) a.stride *= shape[d];
  return a;
}

// Lines of at most this many elements run as blocks of lanes (4 n lanes
// values of work, 1 MiB at 4096 f32 lines); longer ones in four steps.
constexpr int64_t kBlockMaxLen = 4096;

// exp(-2 pi i t / n) for t in [0, n/2], computed in double: the split of a real transform of even n.
template <class R>
std::shared_ptr<const std::vector<std::complex<R>>> split_twiddles(int64_t n) {
  static FftTableCache<int64_t, std::vector<std::complex<R>>> cache;
  return cache.get(n, static_cast<size_t>(n / 2 + 1) * sizeof(std::complex<R>), [n] {
    auto w = std::make_shared<std::vector<std::complex<R>>>(static_cast<size_t>(n / 2 + 1));
    for (int64_t t = 0; t <= n / 2; ++t) {
      const auto [c, sn] = root_of_unity(t, n);
      (*w)[static_cast<size_t>(t)] = {static_cast<R>(c), static_cast<R>(sn)};
    }
    return std::shared_ptr<const std::vector<std::complex<R>>>(std::move(w));
  });
}

// The divisor of n nearest its square root from below (1 for a prime n).
int64_t middle_divisor(int64_t n) {
  for (int64_t d = static_cast<int64_t>(std::sqrt(static_cast<double>(n))); d > 1; --d)
    if (n % d == 0) return d;
  return 1;
}

// Uninitialised room for n values of C from the host's allocator: reused
// from call to call without the page faults of fresh memory (malloc gave
// megabytes back to the system after each transform: under jit a 2^20 rfft
// spent a fifth of its time in the kernel), and counted in memory statistics.
template <class C>
struct Scratch {
  runtime::BufferPtr buffer;
  C* get() const { return static_cast<C*>(buffer->data()); }
};
template <class C>
Scratch<C> scratch(int64_t n) {
  return {std::make_shared<runtime::Buffer>(static_cast<size_t>(n) * sizeof(C), runtime::host_device())};
}

// f(l, k0, k1) for the stretches [k0, k1) of line l covering lines x width
// elements, split among threads: a line's stretch at a time, no division per element.
template <class F>
void over_line_stretches(int64_t lines, int64_t width, F&& f) {
  parallel_ranges(lines * width, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi;) {
      const int64_t l = i / width, k0 = i % width, k1 = std::min(width, k0 + hi - i);
      f(l, k0, k1);
      i += k1 - k0;
    }
  });
}

template <class R>
FftBlockFn<R> block_fn() {
  if constexpr (sizeof(R) == 4)
    return fft_kernels().f32;
  else
    return fft_kernels().f64;
}

// This thread's work for a block of lines of n: 4 n lanes values.
template <class R>
R* lane_work(int64_t n) {
  thread_local std::vector<R> work;
  const size_t want = static_cast<size_t>(4 * n * kFftLanes<R>);
  if (work.size() < want) work.resize(want);
  return work.data();
}

// d when lane[v] == lane[0] + v d for every lane (d > 0), else 0.
int64_t lane_spacing(const int64_t* lane, int lanes) {
  const int64_t d = lanes > 1 ? lane[1] - lane[0] : 1;
  if (d <= 0) return 0;
  for (int v = 2; v < lanes; ++v)
    if (lane[v] - lane[v - 1] != d) return 0;
  return d;
}

// Line l of src (laid out as sa) transformed into line l of dst (da), for
// every line, kFftLanes lines per block, the blocks split among threads.
// Each output is multiplied by scale and, when set, by twiddle[at] (indexed as dst).
template <class R>
void run_lines(const FftPlan<R>& plan, const std::complex<R>* src, const AxisLines& sa, std::complex<R>* dst,
               const AxisLines& da, bool inverse, R scale, const R* twiddle) {
  constexpr int V = kFftLanes<R>;
  const int64_t n = plan.view.n, lines = sa.lines(), blocks = (lines + V - 1) / V;
  const FftBlockFn<R> fn = block_fn<R>();
#pragma omp parallel for schedule(static) if (blocks > 1 && lines * n >= (int64_t{1} << 14))
  for (int64_t b = 0; b < blocks; ++b) {
    int64_t src_lane[V] = {}, dst_lane[V] = {};
    const int lanes = static_cast<int>(std::min<int64_t>(V, lines - b * V));
    for (int v = 0; v < lanes; ++v) {
      src_lane[v] = sa.base(b * V + v);
      dst_lane[v] = da.base(b * V + v);
    }
    const FftLaneBlock<R> block{reinterpret_cast<const R*>(src),
                                src_lane,
                                sa.stride,
                                lane_spacing(src_lane, lanes),
                                reinterpret_cast<R*>(dst),
                                dst_lane,
                                da.stride,
                                lane_spacing(dst_lane, lanes),
                                lanes,
                                scale,
                                twiddle,
                                lane_work<R>(n)};
    fn(plan.view, block, inverse);
  }
}

// The transform of one contiguous line of n = n1 n2 (src) into x, in four steps
// (Bailey's): x as an n1 x n2 matrix has its n2 columns transformed
// (adjacent columns in one block's lanes) and twiddled by W_n^(k1 j2), then
// its n1 rows transformed and written as X[k1 + n1 k2]: every pass's blocks
// read short transforms that stay in cache.
template <class R>
void four_step(const std::complex<R>* src, std::complex<R>* x, const FftPlan<R>& p1, const FftPlan<R>& p2,
               bool inverse) {
  const int64_t n1 = p1.view.n, n2 = p2.view.n, n = n1 * n2;
  const auto t = scratch<std::complex<R>>(n);
  const AxisLines columns{1, n1, n2};
  const auto w = four_step_twiddles<R>(n1, n2);
  run_lines(p1, src, columns, t.get(), columns, inverse, R(1), w->data());
  run_lines(p2, t.get(), AxisLines{n1, n2, 1}, x, AxisLines{1, n2, n1}, inverse,
            inverse ? R(1) / static_cast<R>(n) : R(1), static_cast<const R*>(nullptr));
}

template <class R>
void complex_along(std::complex<R>* data, const Shape& shape, int axis, bool inverse);

// The smallest 2^a 3^b 5^c >= at_least.
int64_t smooth_length(int64_t at_least) {
  int64_t best = 1;
  while (best < at_least) best *= 2;
  for (int64_t p5 = 1; p5 < best; p5 *= 5)
    for (int64_t p35 = p5; p35 < best; p35 *= 3) {
      int64_t v = p35;
      while (v < at_least) v *= 2;
      best = std::min(best, v);
    }
  return best;
}

// Bluestein's algorithm for lengths with a prime factor above kFftMaxRadix:
// with the chirp c_k = exp(-i pi k^2 / n), j k = (j^2 + k^2 - (k - j)^2) / 2
// makes X_k = c_k sum_j (x_j c_j) conj(c_(k-j)), a convolution, done
// circularly at a smooth length m >= 2n - 1 by two transforms of m.
template <class R>
struct Chirp {
  int64_t m = 0;
  std::vector<std::complex<R>> c;       // c_k, k < n
  std::vector<std::complex<R>> kernel;  // the transform of conj(c_|d|) at d mod m, |d| < n (in double)
};

template <class R>
std::shared_ptr<const Chirp<R>> chirp_of(int64_t n) {
  static FftTableCache<int64_t, Chirp<R>> cache;
  const int64_t m = smooth_length(2 * n - 1);
  return cache.get(n, static_cast<size_t>(n + m) * sizeof(std::complex<R>), [n, m] {
    auto ch = std::make_shared<Chirp<R>>();
    ch->m = m;
    std::vector<std::complex<double>> b(static_cast<size_t>(ch->m));
    for (int64_t k = 0; k < n; ++k) {
      const auto [cr, ci] = root_of_unity((k * k) % (2 * n), 2 * n);  // k^2 exact: the angle reduced first
      ch->c.emplace_back(static_cast<R>(cr), static_cast<R>(ci));
      b[static_cast<size_t>(k)] = b[static_cast<size_t>((ch->m - k) % ch->m)] = {cr, -ci};
    }
    complex_along(b.data(), Shape{1, ch->m}, 1, false);
    for (const auto& v : b) ch->kernel.emplace_back(static_cast<R>(v.real()), static_cast<R>(v.imag()));
    return std::shared_ptr<const Chirp<R>>(std::move(ch));
  });
}

// a b, written out (std::complex's operator* checks for NaNs through a library call).
template <class R>
std::complex<R> times(std::complex<R> a, std::complex<R> b) {
  return {a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()};
}

// Every line along a (of src) transformed into data by Bluestein's algorithm;
// an inverse as the conjugate of the forward transform of the conjugate, over n.
template <class R>
void bluestein_along(const std::complex<R>* src, std::complex<R>* data, const AxisLines& a, bool inverse) {
  using C = std::complex<R>;
  const int64_t n = a.len, lines = a.lines();
  const std::shared_ptr<const Chirp<R>> chirp = chirp_of<R>(n);
  const Chirp<R>& ch = *chirp;
  const int64_t m = ch.m;
  const auto buffer = scratch<C>(lines * m);
  C* t = buffer.get();
  over_line_stretches(lines, m, [&](int64_t l, int64_t j0, int64_t j1) {
    const C* x = src + a.base(l);
    C* tl = t + l * m;
    for (int64_t j = j0; j < std::min(j1, n); ++j) {
      const C v = x[j * a.stride];
      tl[j] = times(inverse ? std::conj(v) : v, ch.c[static_cast<size_t>(j)]);
    }
    for (int64_t j = std::max(j0, n); j < j1; ++j) tl[j] = C(0, 0);
  });
  complex_along(t, Shape{lines, m}, 1, false);
  over_line_stretches(lines, m, [&](int64_t l, int64_t j0, int64_t j1) {
    for (int64_t j = j0; j < j1; ++j) t[l * m + j] = times(t[l * m + j], ch.kernel[static_cast<size_t>(j)]);
  });
  complex_along(t, Shape{lines, m}, 1, true);
  over_line_stretches(lines, n, [&](int64_t l, int64_t k0, int64_t k1) {
    C* y = data + a.base(l);
    for (int64_t k = k0; k < k1; ++k) {
      const C v = times(t[l * m + k], ch.c[static_cast<size_t>(k)]);
      y[k * a.stride] = inverse ? std::conj(v) / static_cast<R>(n) : v;
    }
  });
}

// The complex transform of every line along `axis` of src (shape) into data
// (src may be data).
template <class R>
void complex_along(const std::complex<R>* src, std::complex<R>* data, const Shape& shape, int axis, bool inverse) {
  const AxisLines a = lines_of(shape, axis);
  const int64_t n = a.len;
  if (n > 1 && !fft_plannable(n)) return bluestein_along(src, data, a, inverse);
  const int64_t n1 = n > kBlockMaxLen ? middle_divisor(n) : 1;
  if (n > 1 && n1 == 1) {
    run_lines(*fft_plan<R>(n), src, a, data, a, inverse, inverse ? R(1) / static_cast<R>(n) : R(1),
              static_cast<const R*>(nullptr));
    return;
  }
  if (n <= 1 || a.lines() == 0) {
    if (src != data) std::copy(src, src + a.lines() * n, data);
    return;
  }
  // Long lines in four steps (a plannable n > kBlockMaxLen is composite: n1 > 1).
  const auto p1 = fft_plan<R>(n1), p2 = fft_plan<R>(n / n1);
  if (a.stride == 1) {
    for (int64_t l = 0; l < a.lines(); ++l) four_step(src + l * n, data + l * n, *p1, *p2, inverse);
    return;
  }
  if (src != data) std::copy(src, src + a.lines() * n, data);
  std::vector<std::complex<R>> line(static_cast<size_t>(n));
  for (int64_t l = 0; l < a.lines(); ++l) {
    std::complex<R>* p = data + a.base(l);
    for (int64_t i = 0; i < n; ++i) line[static_cast<size_t>(i)] = p[i * a.stride];
    four_step(line.data(), line.data(), *p1, *p2, inverse);
    for (int64_t i = 0; i < n; ++i) p[i * a.stride] = line[static_cast<size_t>(i)];
  }
}

// The same in place.
template <class R>
void complex_along(std::complex<R>* data, const Shape& shape, int axis, bool inverse) {
  complex_along(data, data, shape, axis, inverse);
}

template <class R>
void fft_typed(const KernelCall& call, FftType type, const ir::Ints& lengths) {
  using C = std::complex<R>;
  const Shape& in_shape = call.inputs[0].type->shape;
  const Shape& out_shape = call.outputs[0].type->shape;
  const int rank = static_cast<int>(in_shape.size()), k = static_cast<int>(lengths.size());
  const int last = rank - 1;
  const int64_t out_n = out_elements(call);
  switch (type) {
    case FftType::fft:
    case FftType::ifft: {
      C* y = out_ptr<C>(call, 0);
      complex_along(in_ptr<C>(call, 0), y, out_shape, rank - k, type == FftType::ifft);
      for (int axis = rank - k + 1; axis < rank; ++axis) complex_along(y, out_shape, axis, type == FftType::ifft);
      return;
    }
    case FftType::rfft: {
      // The half spectrum along the last axis, then complex transforms along the others.
      const R* x = in_ptr<R>(call, 0);
      C* y = out_ptr<C>(call, 0);
      const int64_t n = in_shape.back(), m = out_shape.back(), lines = out_n / m;
      if (n % 2 == 0) {
        // The even and odd samples as one complex line of h = n/2, transformed,
        // then split: X[k] = E_k + W_n^k O_k, E_k = (Z_k + conj Z_(h-k)) / 2,
        // O_k = -i (Z_k - conj Z_(h-k)) / 2.
        const int64_t h = n / 2;
        const auto z_buffer = scratch<C>(lines * h);
        C* z = z_buffer.get();
        complex_along(reinterpret_cast<const C*>(x), z, Shape{lines, h}, 1, false);
        const auto w_table = split_twiddles<R>(n);
        const C* w = w_table->data();
        over_line_stretches(lines, m, [&](int64_t l, int64_t k0, int64_t k1) {
          const C* zl = z + l * h;
          C* out = y + l * m;
          for (int64_t k = k0; k < k1; ++k) {
            if (k == 0 || k == h) {  // E and O real: X_0 = E + O, X_h = E - O exactly
              out[k] = C(k == 0 ? zl[0].real() + zl[0].imag() : zl[0].real() - zl[0].imag(), R(0));
              continue;
            }
            const C zk = zl[k], zc = zl[h - k];
            const R er = (zk.real() + zc.real()) * R(0.5), ei = (zk.imag() - zc.imag()) * R(0.5);
            const R orr = (zk.imag() + zc.imag()) * R(0.5), oi = (zc.real() - zk.real()) * R(0.5);
            const R wr = w[k].real(), wi = w[k].imag();
            out[k] = C(er + wr * orr - wi * oi, ei + wr * oi + wi * orr);
          }
        });
      } else {
        // Odd lengths: a complex transform of the real line, its first m bins kept.
        const auto z_buffer = scratch<C>(lines * n);
        C* z = z_buffer.get();
        for (int64_t i = 0; i < lines * n; ++i) z[i] = C(x[i], R(0));
        complex_along(z, Shape{lines, n}, 1, false);
        for (int64_t l = 0; l < lines; ++l) {
          std::copy(z + l * n, z + l * n + m, y + l * m);
          y[l * m] = C(y[l * m].real(), R(0));  // a real line's sum (Bluestein's leaves a rounding error there)
        }
      }
      for (int axis = rank - k; axis < last; ++axis) complex_along(y, out_shape, axis, false);
      return;
    }
    case FftType::irfft: {
      // Inverse complex transforms along the other axes (on a copy), then the real inverse along the last.
      const int64_t m = in_shape.back(), n = out_shape.back(), lines = out_n / n;
      std::vector<C> work(k > 1 ? static_cast<size_t>(lines * m) : 0);
      for (int axis = rank - k; axis < last; ++axis)
        complex_along(axis == rank - k ? in_ptr<C>(call, 0) : work.data(), work.data(), in_shape, axis, true);
      const C* spectrum = k > 1 ? work.data() : in_ptr<C>(call, 0);
      R* y = out_ptr<R>(call, 0);
      // X[k] for k <= n/2; the imaginary parts of X[0] and (n even) X[n/2] are ignored, as NumPy's.
      auto at = [&](int64_t l, int64_t k) {
        const C v = spectrum[l * m + k];
        return k == 0 || 2 * k == n ? C(v.real(), R(0)) : v;
      };
      if (n % 2 == 0) {
        // Undo rfft's split: Z_k = E_k + i O_k with E_k = (X[k] + conj X[h-k]) / 2 and
        // O_k = W_n^-k (X[k] - conj X[h-k]) / 2; one inverse transform of h = n/2 gives the
        // even and odd samples interleaved.
        const int64_t h = n / 2;
        const auto w_table = split_twiddles<R>(n);
        const std::vector<C>& w = *w_table;
        const auto z_buffer = scratch<C>(lines * h);
        C* z = z_buffer.get();
        over_line_stretches(lines, h, [&](int64_t l, int64_t k0, int64_t k1) {
          const C* X = spectrum + l * m;
          C* zl = z + l * h;
          for (int64_t k = k0; k < k1; ++k) {
            // a = X[k], b = conj X[h - k]; at k = 0 both are bins 0 and h, real parts only.
            const R ar = X[k].real(), ai = k == 0 ? R(0) : X[k].imag();
            const R br = X[h - k].real(), bi = k == 0 ? R(0) : -X[h - k].imag();
            const R er = (ar + br) * R(0.5), ei = (ai + bi) * R(0.5);
            const R dr = (ar - br) * R(0.5), di = (ai - bi) * R(0.5);
            const C wk = w[static_cast<size_t>(k)];  // odd = conj(wk) d
            const R orr = wk.real() * dr + wk.imag() * di, oi = wk.real() * di - wk.imag() * dr;
            zl[k] = C(er - oi, ei + orr);
          }
        });
        complex_along(z, reinterpret_cast<C*>(y), Shape{lines, h}, 1, true);
      } else {
        // Odd lengths: the whole Hermitian spectrum, a complex inverse, its real parts.
        const auto z_buffer = scratch<C>(lines * n);
        C* z = z_buffer.get();
        for (int64_t l = 0; l < lines; ++l)
          for (int64_t k = 0; k < n; ++k) z[l * n + k] = 2 * k < n ? at(l, k) : std::conj(at(l, n - k));
        complex_along(z, Shape{lines, n}, 1, true);
        for (int64_t i = 0; i < lines * n; ++i) y[i] = z[i].real();
      }
      return;
    }
  }
}

}  // namespace

void fft_kernel(const KernelCall& call) {
  const FftType type = *ir::fft_type_from_name(ir::attr<std::string>(call.attrs, "fft_type", call.op));
  const ir::Ints& lengths = ints_attr(call, "fft_lengths");
  const DType part = ir::real_dtype(type == FftType::rfft ? call.inputs[0].type->dtype : call.outputs[0].type->dtype);
  if (part == DType::f64)
    fft_typed<double>(call, type, lengths);
  else
    fft_typed<float>(call, type, lengths);
}

}  // namespace graft::interpreter
