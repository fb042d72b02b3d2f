// CPU kernel of the fft family: lax.fft's transforms over the trailing axes,
// one axis at a time, on Eigen's FFT module (its kissfft backend: mixed
// radix 2, 3, 4, 5 and generic, O(n log n) for every length). Lines along an
// axis run in parallel, each OpenMP thread with its own plans. The inverse
// transforms scale by 1/n, as JAX's.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <map>
#include <mutex>
#include <numbers>
#include <vector>

#include <omp.h>

#include <unsupported/Eigen/FFT>

#include "interpreter/kernels/loops.h"
#include "ir/fft_type.h"

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

// Runs f(fft, line, buffer_in, buffer_out) on every line, the lines split among threads.
template <class R, class F>
void over_lines(int64_t lines, int64_t work_per_line, F f) {
  const bool parallel = lines > 1 && lines * work_per_line >= (int64_t{1} << 15);
#pragma omp parallel if (parallel)
  {
    Eigen::FFT<R> fft;
    const int threads = omp_get_num_threads(), me = omp_get_thread_num();
    for (int64_t l = lines * me / threads; l < lines * (me + 1) / threads; ++l) f(fft, l);
  }
}

// Long lines, few of them, run as four steps (Bailey's): as a matrix of
// n1 x n2 whose short transforms fit in cache and spread over the threads.
constexpr int64_t kFourStepMin = int64_t{1} << 14;

// exp(-2 pi i t / n) for t in [0, n), computed once per length in double.
template <class R>
const std::vector<std::complex<R>>& twiddles(int64_t n) {
  static std::mutex mu;
  static std::map<int64_t, std::vector<std::complex<R>>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto [it, fresh] = cache.try_emplace(n);
  if (fresh) {
    it->second.resize(static_cast<size_t>(n));
    for (int64_t t = 0; t < n; ++t) {
      const double angle = -2.0 * std::numbers::pi * static_cast<double>(t) / static_cast<double>(n);
      it->second[static_cast<size_t>(t)] = {static_cast<R>(std::cos(angle)), static_cast<R>(std::sin(angle))};
    }
  }
  return it->second;
}

// The divisor of n nearest its square root from below (1 for a prime n).
int64_t middle_divisor(int64_t n) {
  for (int64_t d = static_cast<int64_t>(std::sqrt(static_cast<double>(n))); d > 1; --d)
    if (n % d == 0) return d;
  return 1;
}

template <class R>
void complex_along(std::complex<R>* data, const Shape& shape, int axis, bool inverse);

// dst (cols x rows) = the transpose of src (rows x cols), in 32 x 32 tiles
// (a tile's rows and columns stay in cache and its pages in the TLB).
template <class T>
void transpose_tiled(const T* src, int64_t rows, int64_t cols, T* dst) {
  constexpr int64_t kTile = 32;
  const int64_t row_tiles = (rows + kTile - 1) / kTile;
#pragma omp parallel for schedule(static) if (rows * cols >= (int64_t{1} << 16))
  for (int64_t bi = 0; bi < row_tiles; ++bi)
    for (int64_t bj = 0; bj < cols; bj += kTile)
      for (int64_t i = bi * kTile; i < std::min(rows, (bi + 1) * kTile); ++i)
        for (int64_t j = bj; j < std::min(cols, bj + kTile); ++j) dst[j * rows + i] = src[i * cols + j];
}

// The transform of one contiguous line of n = n1 n2 in place (the six-step
// form of Bailey's algorithm): x as an n1 x n2 matrix is transposed, its n2
// columns (now rows) transformed, twiddled by W_n^(j2 k1), transposed back,
// its n1 rows transformed, and transposed into X[k1 + n1 k2] order. Every
// short transform reads a contiguous row. (The inverse's two passes scale by
// 1/n1 and 1/n2.)
template <class R>
void four_step(std::complex<R>* x, int64_t n, int64_t n1, bool inverse) {
  using C = std::complex<R>;
  const int64_t n2 = n / n1;
  std::vector<C> t(static_cast<size_t>(n));
  transpose_tiled(x, n1, n2, t.data());  // t: n2 x n1, t[j2][j1]
  complex_along(t.data(), Shape{n2, n1}, 1, inverse);
  const std::vector<C>& w = twiddles<R>(n);
  parallel_ranges(n2, [&](int64_t lo, int64_t hi) {
    for (int64_t j2 = lo; j2 < hi; ++j2) {
      C* row = t.data() + j2 * n1;  // row[k1] *= W^(j2 k1), j2 k1 < n
      if (inverse)
        for (int64_t k1 = 1; k1 < n1; ++k1) row[k1] *= std::conj(w[static_cast<size_t>(j2 * k1)]);
      else
        for (int64_t k1 = 1; k1 < n1; ++k1) row[k1] *= w[static_cast<size_t>(j2 * k1)];
    }
  });
  transpose_tiled(t.data(), n2, n1, x);  // x: n1 x n2, x[k1][j2]
  complex_along(x, Shape{n1, n2}, 1, inverse);
  transpose_tiled(x, n1, n2, t.data());  // t[k2][k1] = X[k1 + n1 k2]
  std::copy(t.begin(), t.end(), x);
}

// Whether a line of n is long and its lines too few to occupy the threads.
bool four_step_worth(int64_t n, int64_t lines) {
  return n >= kFourStepMin && lines < 2 * omp_get_max_threads() && middle_divisor(n) > 1;
}

// The complex transform of every line along `axis` of data (shape), in place.
template <class R>
void complex_along(std::complex<R>* data, const Shape& shape, int axis, bool inverse) {
  const AxisLines a = lines_of(shape, axis);
  if (a.len <= 1) return;
  if (four_step_worth(a.len, a.lines())) {
    std::vector<std::complex<R>> line(static_cast<size_t>(a.len));
    for (int64_t l = 0; l < a.lines(); ++l) {
      std::complex<R>* p = data + a.base(l);
      for (int64_t i = 0; i < a.len; ++i) line[static_cast<size_t>(i)] = p[i * a.stride];
      four_step(line.data(), a.len, middle_divisor(a.len), inverse);
      for (int64_t i = 0; i < a.len; ++i) p[i * a.stride] = line[static_cast<size_t>(i)];
    }
    return;
  }
  over_lines<R>(a.lines(), a.len * 8, [&](Eigen::FFT<R>& fft, int64_t l) {
    thread_local std::vector<std::complex<R>> in, out;
    in.resize(static_cast<size_t>(a.len));
    out.resize(static_cast<size_t>(a.len));
    std::complex<R>* p = data + a.base(l);
    for (int64_t i = 0; i < a.len; ++i) in[static_cast<size_t>(i)] = p[i * a.stride];
    if (inverse)
      fft.inv(out.data(), in.data(), a.len);
    else
      fft.fwd(out.data(), in.data(), a.len);
    for (int64_t i = 0; i < a.len; ++i) p[i * a.stride] = out[static_cast<size_t>(i)];
  });
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
      std::memcpy(y, in_ptr<C>(call, 0), static_cast<size_t>(out_n) * sizeof(C));
      for (int axis = rank - k; axis < rank; ++axis) complex_along(y, out_shape, axis, type == FftType::ifft);
      return;
    }
    case FftType::rfft: {
      // The half spectrum along the last axis, then complex transforms along the others.
      const R* x = in_ptr<R>(call, 0);
      C* y = out_ptr<C>(call, 0);
      const int64_t n = in_shape.back(), m = out_shape.back(), lines = out_n / m;
      if (n % 2 == 0 && four_step_worth(n / 2, lines)) {
        // Long lines: the even and odd samples as one complex line of h = n/2,
        // transformed in four steps, then split: X[k] = E_k + W_n^k O_k.
        const int64_t h = n / 2;
        const std::vector<C>& w = twiddles<R>(n);
        std::vector<C> z(static_cast<size_t>(h));
        for (int64_t l = 0; l < lines; ++l) {
          std::memcpy(static_cast<void*>(z.data()), x + l * n, static_cast<size_t>(n) * sizeof(R));
          four_step(z.data(), h, middle_divisor(h), false);
          C* out = y + l * m;
          parallel_ranges(m, [&](int64_t lo, int64_t hi) {
            for (int64_t k = lo; k < hi; ++k) {
              const C zk = z[static_cast<size_t>(k % h)], zc = std::conj(z[static_cast<size_t>((h - k) % h)]);
              const C even = (zk + zc) * R(0.5), odd = (zk - zc) * C(0, R(-0.5));
              out[k] = even + w[static_cast<size_t>(k)] * odd;
            }
          });
        }
        for (int axis = rank - k; axis < last; ++axis) complex_along(y, out_shape, axis, false);
        return;
      }
      over_lines<R>(lines, n * 8, [&](Eigen::FFT<R>& fft, int64_t l) {
        fft.SetFlag(Eigen::FFT<R>::HalfSpectrum);
        thread_local std::vector<C> half;
        half.resize(static_cast<size_t>(n));  // kissfft's even-length path writes n/2 + 1 entries; odd ones n
        fft.fwd(half.data(), x + l * n, n);
        std::copy(half.begin(), half.begin() + m, y + l * m);
      });
      for (int axis = rank - k; axis < last; ++axis) complex_along(y, out_shape, axis, false);
      return;
    }
    case FftType::irfft: {
      // Inverse complex transforms along the other axes (on a copy), then the real inverse along the last.
      const int64_t m = in_shape.back(), n = out_shape.back(), lines = out_n / n;
      std::vector<C> work(in_ptr<C>(call, 0), in_ptr<C>(call, 0) + lines * m);
      for (int axis = rank - k; axis < last; ++axis) complex_along(work.data(), in_shape, axis, true);
      R* y = out_ptr<R>(call, 0);
      if (n % 2 == 0 && four_step_worth(n / 2, lines)) {
        // Long lines: undo rfft's split (E_k, O_k from X[k] and X[h - k]; the
        // imaginary parts of X[0] and X[h] are ignored, as NumPy's), one
        // inverse transform of h = n/2, and the even and odd samples interleaved.
        const int64_t h = n / 2;
        const std::vector<C>& w = twiddles<R>(n);
        std::vector<C> z(static_cast<size_t>(h));
        for (int64_t l = 0; l < lines; ++l) {
          const C* X = work.data() + l * m;
          auto at = [&](int64_t k) { return k == 0 || k == h ? C(X[k].real(), 0) : X[k]; };
          parallel_ranges(h, [&](int64_t lo, int64_t hi) {
            for (int64_t k = lo; k < hi; ++k) {
              const C a = at(k), b = std::conj(at(h - k));
              const C even = (a + b) * R(0.5), odd = std::conj(w[static_cast<size_t>(k)]) * (a - b) * R(0.5);
              z[static_cast<size_t>(k)] = even + C(0, 1) * odd;
            }
          });
          four_step(z.data(), h, middle_divisor(h), true);
          std::memcpy(y + l * n, z.data(), static_cast<size_t>(n) * sizeof(R));
        }
        return;
      }
      over_lines<R>(lines, n * 8, [&](Eigen::FFT<R>& fft, int64_t l) {
        thread_local std::vector<C> half;
        half.assign(work.begin() + l * m, work.begin() + (l + 1) * m);
        half.resize(static_cast<size_t>(n / 2 + 1));
        fft.inv(y + l * n, half.data(), n);
      });
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
