// CPU kernel of the fft family: lax.fft's transforms over the trailing axes,
// one axis at a time, on Eigen's FFT module (its kissfft backend: mixed
// radix 2, 3, 4, 5 and generic, O(n log n) for every length). Lines along an
// axis run in parallel, each OpenMP thread with its own plans. The inverse
// transforms scale by 1/n, as JAX's.
#include <complex>
#include <cstring>
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

// The complex transform of every line along `axis` of data (shape), in place.
template <class R>
void complex_along(std::complex<R>* data, const Shape& shape, int axis, bool inverse) {
  const AxisLines a = lines_of(shape, axis);
  if (a.len <= 1) return;
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
