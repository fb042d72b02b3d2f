// graft::fft (include/graft/fft.h): jnp.fft's functions over the fft
// primitive. Each moves its axes to the end, crops or zero-pads them to the
// requested sizes, runs the primitive over at most 3 trailing axes at a time
// (the transforms are separable), scales for `norm` and moves the axes back.
#include "graft/fft.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "api/dispatch.h"
#include "api/lowering.h"
#include "graft/errors.h"
#include "graft/ops.h"
#include "ir/dtype.h"
#include "ir/fft_type.h"

namespace graft::fft {
namespace {

using ir::FftType;

Array bind_fft(const Array& x, FftType type, const Shape& lengths, const Loc& loc) {
  return detail::bind1(ir::Op::fft, {x},
                       {{"fft_type", std::string(ir::fft_type_name(type))}, {"fft_lengths", ir::Ints(lengths)}}, loc);
}

// The transformed axes, normalised, in order; by default the last `count` (or all, for count < 0).
std::vector<int> axes_of(const char* fn, const Array& a, std::vector<int> axes, int64_t count, const Loc& loc) {
  const int rank = a.ndim();
  if (axes.empty()) {
    const int k = count < 0 ? rank : static_cast<int>(count);
    if (k > rank)
      throw ShapeError(std::string(fn) + ": " + std::to_string(k) + " sizes for a rank-" + std::to_string(rank) +
                       " array " + detail::describe(a) + detail::where(loc));
    for (int i = rank - k; i < rank; ++i) axes.push_back(i);
  }
  for (int& ax : axes) ax = detail::normalize_axis(fn, ax, rank, loc);
  std::vector<int> sorted = axes;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    throw ShapeError(std::string(fn) + ": repeated axes" + detail::where(loc));
  if (axes.empty()) throw ShapeError(std::string(fn) + ": no axes to transform" + detail::where(loc));
  return axes;
}

// x cropped or zero-padded to `size` along axis.
Array fit(const Array& x, int axis, int64_t size, const Loc& loc) {
  const int64_t have = x.shape()[static_cast<size_t>(axis)];
  if (have == size) return x;
  if (have > size) {
    Shape start(x.shape().size(), 0), stop = x.shape();
    stop[static_cast<size_t>(axis)] = size;
    return slice(x, start, stop, {}, loc);
  }
  std::vector<std::pair<int64_t, int64_t>> widths(x.shape().size(), {0, 0});
  widths[static_cast<size_t>(axis)].second = size - have;
  return pad(x, widths, 0.0, loc);
}

// The transform of `type` over `axes` with output sizes s (of the transformed signal).
Array transform(const char* fn, FftType type, const Array& input, Shape s, std::vector<int> axes_in,
                const std::string& norm, const Loc& loc) {
  if (norm != "backward" && norm != "ortho" && norm != "forward")
    throw Error(std::string(fn) + ": norm must be \"backward\", \"ortho\" or \"forward\", not \"" + norm + "\"" +
                detail::where(loc));
  const std::vector<int> axes = axes_of(fn, input, axes_in, s.empty() ? -1 : static_cast<int64_t>(s.size()), loc);
  if (!s.empty() && s.size() != axes.size())
    throw ShapeError(std::string(fn) + ": " + std::to_string(s.size()) + " sizes for " + std::to_string(axes.size()) +
                     " axes" + detail::where(loc));
  // The operand's dtype: complex for fft, ifft and irfft; a real float for rfft.
  Array x = input;
  const DType d = x.dtype();
  const DType part = d == DType::f64 ? DType::f64 : default_float_dtype();  // a real operand's precision
  if (type == FftType::rfft) {
    if (ir::is_complex(d))
      throw DTypeError(std::string(fn) + ": needs a real array, got " + detail::describe(x) + detail::where(loc));
    x = detail::convert(x, part, loc);
  } else if (!ir::is_complex(d)) {
    x = detail::convert(x, ir::complex_dtype(part), loc);
  }
  // Signal sizes: given, else the axes' sizes (irfft's last: 2 (m - 1)).
  if (s.empty())
    for (size_t i = 0; i < axes.size(); ++i) {
      const int64_t size = x.shape()[static_cast<size_t>(axes[i])];
      s.push_back(type == FftType::irfft && i + 1 == axes.size() ? 2 * (size - 1) : size);
    }
  for (int64_t n : s)
    if (n < 1) throw ShapeError(std::string(fn) + ": invalid transform size " + std::to_string(n) + detail::where(loc));
  // Move the axes to the end, in order.
  std::vector<int> perm;
  for (int i = 0; i < x.ndim(); ++i)
    if (std::find(axes.begin(), axes.end(), i) == axes.end()) perm.push_back(i);
  perm.insert(perm.end(), axes.begin(), axes.end());
  x = transpose(x, perm, loc);
  const int rank = x.ndim(), k = static_cast<int>(axes.size());
  for (int i = 0; i < k; ++i) {
    const bool half = type == FftType::irfft && i + 1 == k;
    x = fit(x, rank - k + i, half ? s[static_cast<size_t>(i)] / 2 + 1 : s[static_cast<size_t>(i)], loc);
  }
  // Chunks of at most 3 trailing axes: rfft's last axis first, irfft's last axis last.
  auto run = [&](FftType t, int first, int count) {  // axes [first, first + count) of the k, which must end x
    const Shape lengths(s.begin() + first, s.begin() + first + count);
    if (first + count == k) return bind_fft(x, t, lengths, loc);
    // Not the trailing axes: move them to the end and back.
    std::vector<int> p, back(static_cast<size_t>(rank));
    for (int i = 0; i < rank; ++i)
      if (i < rank - k + first || i >= rank - k + first + count) p.push_back(i);
    for (int i = 0; i < count; ++i) p.push_back(rank - k + first + i);
    for (int i = 0; i < rank; ++i) back[static_cast<size_t>(p[static_cast<size_t>(i)])] = i;
    return transpose(bind_fft(transpose(x, p, loc), t, lengths, loc), back, loc);
  };
  if (type == FftType::rfft) {
    x = run(FftType::rfft, k - 1, 1);
    for (int first = 0; first < k - 1; first += 3) x = run(FftType::fft, first, std::min(3, k - 1 - first));
  } else if (type == FftType::irfft) {
    for (int first = 0; first < k - 1; first += 3) x = run(FftType::ifft, first, std::min(3, k - 1 - first));
    x = run(FftType::irfft, k - 1, 1);
  } else {
    for (int first = 0; first < k; first += 3) x = run(type, first, std::min(3, k - first));
  }
  // norm: the primitive's inverse divides by N; "ortho" splits sqrt(N) both ways, "forward" moves N.
  const double count = std::accumulate(s.begin(), s.end(), 1.0, [](double a, int64_t b) { return a * b; });
  const bool inverse = type == FftType::ifft || type == FftType::irfft;
  double scale = 1.0;
  if (norm == "ortho") scale = inverse ? std::sqrt(count) : 1.0 / std::sqrt(count);
  if (norm == "forward") scale = inverse ? count : 1.0 / count;
  if (scale != 1.0) x = x * scale;
  std::vector<int> back(static_cast<size_t>(rank));
  for (int i = 0; i < rank; ++i) back[static_cast<size_t>(perm[static_cast<size_t>(i)])] = i;
  return transpose(x, back, loc);
}

Shape one(int64_t n) { return n < 0 ? Shape{} : Shape{n}; }

}  // namespace

Array fft(const Array& a, int64_t n, int axis, const std::string& norm, Loc loc) {
  return transform("fft", FftType::fft, a, one(n), {axis}, norm, loc);
}
Array ifft(const Array& a, int64_t n, int axis, const std::string& norm, Loc loc) {
  return transform("ifft", FftType::ifft, a, one(n), {axis}, norm, loc);
}
Array rfft(const Array& a, int64_t n, int axis, const std::string& norm, Loc loc) {
  return transform("rfft", FftType::rfft, a, one(n), {axis}, norm, loc);
}
Array irfft(const Array& a, int64_t n, int axis, const std::string& norm, Loc loc) {
  return transform("irfft", FftType::irfft, a, one(n), {axis}, norm, loc);
}

Array fft2(const Array& a, Shape s, std::vector<int> axes, const std::string& norm, Loc loc) {
  return transform("fft2", FftType::fft, a, std::move(s), std::move(axes), norm, loc);
}
Array ifft2(const Array& a, Shape s, std::vector<int> axes, const std::string& norm, Loc loc) {
  return transform("ifft2", FftType::ifft, a, std::move(s), std::move(axes), norm, loc);
}
Array rfft2(const Array& a, Shape s, std::vector<int> axes, const std::string& norm, Loc loc) {
  return transform("rfft2", FftType::rfft, a, std::move(s), std::move(axes), norm, loc);
}
Array irfft2(const Array& a, Shape s, std::vector<int> axes, const std::string& norm, Loc loc) {
  return transform("irfft2", FftType::irfft, a, std::move(s), std::move(axes), norm, loc);
}

Array fftn(const Array& a, Shape s, std::vector<int> axes, const std::string& norm, Loc loc) {
  return transform("fftn", FftType::fft, a, std::move(s), std::move(axes), norm, loc);
}
Array ifftn(const Array& a, Shape s, std::vector<int> axes, const std::string& norm, Loc loc) {
  return transform("ifftn", FftType::ifft, a, std::move(s), std::move(axes), norm, loc);
}
Array rfftn(const Array& a, Shape s, std::vector<int> axes, const std::string& norm, Loc loc) {
  return transform("rfftn", FftType::rfft, a, std::move(s), std::move(axes), norm, loc);
}
Array irfftn(const Array& a, Shape s, std::vector<int> axes, const std::string& norm, Loc loc) {
  return transform("irfftn", FftType::irfft, a, std::move(s), std::move(axes), norm, loc);
}

Array fftfreq(int64_t n, double d, DType dtype, Loc loc) {
  if (n < 1) throw ShapeError("fftfreq: n must be positive, got " + std::to_string(n) + detail::where(loc));
  std::vector<double> f(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    f[static_cast<size_t>(i)] = static_cast<double>(i < (n + 1) / 2 ? i : i - n) / (d * n);
  return astype(array(f, {n}, loc), dtype, loc);
}

Array rfftfreq(int64_t n, double d, DType dtype, Loc loc) {
  if (n < 1) throw ShapeError("rfftfreq: n must be positive, got " + std::to_string(n) + detail::where(loc));
  std::vector<double> f(static_cast<size_t>(n / 2 + 1));
  for (size_t i = 0; i < f.size(); ++i) f[i] = static_cast<double>(i) / (d * n);
  return astype(array(f, {static_cast<int64_t>(f.size())}, loc), dtype, loc);
}

namespace {
// x rolled by shift(size) along each of axes (all when empty).
template <class Shift>
Array roll_axes(const char* fn, const Array& x, std::vector<int> axes, Shift shift, const Loc& loc) {
  if (axes.empty())
    for (int i = 0; i < x.ndim(); ++i) axes.push_back(i);
  Array y = x;
  for (int ax : axes) {
    const int a = detail::normalize_axis(fn, ax, x.ndim(), loc);
    const int64_t n = y.shape()[static_cast<size_t>(a)];
    if (n == 0) continue;
    const int64_t k = ((shift(n) % n) + n) % n;  // the element at i moves to i + k
    if (k == 0) continue;
    Shape lo(y.shape().size(), 0), mid = y.shape(), hi = y.shape();
    mid[static_cast<size_t>(a)] = n - k;
    Shape start = lo;
    start[static_cast<size_t>(a)] = n - k;
    y = concatenate({slice(y, start, hi, {}, loc), slice(y, lo, mid, {}, loc)}, a, loc);
  }
  return y;
}
}  // namespace

Array fftshift(const Array& x, std::vector<int> axes, Loc loc) {
  return roll_axes(
      "fftshift", x, std::move(axes), [](int64_t n) { return n / 2; }, loc);
}
Array ifftshift(const Array& x, std::vector<int> axes, Loc loc) {
  return roll_axes(
      "ifftshift", x, std::move(axes), [](int64_t n) { return -(n / 2); }, loc);
}

}  // namespace graft::fft
