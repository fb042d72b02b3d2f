// CPU kernels of the windowed reductions and of max pooling's derivatives.
// The operand's trailing dimensions whose windows are trivial (one element,
// stride 1, no padding or dilation: the features of an NHWC pool) are lanes,
// computed side by side in contiguous runs. Over the other dimensions the
// operand indices each output index's window reaches are listed once per
// dimension (Windows::taps): padding and the holes base dilation makes take
// no part, so a window visits only real elements, in order, last dimension
// fastest. reduce_window_* fold them from the identity; select_and_* keep
// the first element the select prefers ("ge": the first maximum, as XLA's
// SelectAndScatter), a window with no real element gathering 0 and
// scattering nothing.
#include <complex>
#include <string>
#include <type_traits>
#include <vector>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "interpreter/kernels/layout.h"
#include "interpreter/kernels/loops.h"
#include "interpreter/kernels/reduce_step.h"

namespace graft::interpreter {
namespace {

using ir::Op;

class Windows {
 public:
  // The windows of the call's attributes over `operand`, giving `windowed`.
  Windows(const KernelCall& call, const Shape& operand, const Shape& windowed) {
    const ir::Ints &window = ints_attr(call, "window_dimensions"), &stride = ints_attr(call, "window_strides"),
                   &lo = ints_attr(call, "padding_low"), &hi = ints_attr(call, "padding_high"),
                   &base = ints_attr(call, "base_dilation"), &wd = ints_attr(call, "window_dilation");
    size_t outer = operand.size();
    while (outer > 0) {
      const size_t d = outer - 1;
      if (window[d] != 1 || stride[d] != 1 || lo[d] != 0 || hi[d] != 0 || base[d] != 1) break;
      lanes_ *= operand[d];
      --outer;
    }
    out_.assign(windowed.begin(), windowed.begin() + static_cast<std::ptrdiff_t>(outer));
    const std::vector<int64_t> steps = row_major_strides(operand);
    taps_.resize(outer);
    for (size_t d = 0; d < outer; ++d) {
      Taps& t = taps_[d];
      t.start.push_back(0);
      for (int64_t p = 0; p < windowed[d]; ++p) {
        for (int64_t w = 0; w < window[d]; ++w) {
          const int64_t at = p * stride[d] + w * wd[d] - lo[d];
          if (at >= 0 && at % base[d] == 0 && at / base[d] < operand[d]) t.offsets.push_back(at / base[d] * steps[d]);
        }
        t.start.push_back(static_cast<int64_t>(t.offsets.size()));
      }
    }
  }

  // Elements side by side: output o's lane l is output o * lanes() + l, and
  // reads operand offsets (from f's list) + l.
  int64_t lanes() const { return lanes_; }
  int64_t outputs() const { return ir::ValueType{DType::f32, out_}.num_elements(); }  // windows, lanes aside

  // Calls f(o, offsets) for windows o in [b, e) in order, offsets listing
  // the operand offsets of window o's real elements in order.
  template <class F>
  void each_output_in(int64_t b, int64_t e, F&& f) const {
    std::vector<int64_t> p = unravel(b), offsets;
    for (int64_t o = b; o < e; ++o) {
      offsets.clear();
      list(0, 0, p, offsets);
      f(o, offsets);
      for (int d = static_cast<int>(p.size()) - 1; d >= 0; --d) {
        if (++p[d] < out_[d]) break;
        p[d] = 0;
      }
    }
  }

  // each_output_in over every window, on OpenMP threads when `work` (the
  // elements visited) is large.
  template <class F>
  void each_output(F&& f, int64_t work) const {
    if (work < kParallelThreshold || outputs() < 2) return each_output_in(0, outputs(), f);
    const int64_t chunk = std::max<int64_t>(1, (int64_t{1} << 14) / lanes_), n = outputs();
    const int64_t chunks = (n + chunk - 1) / chunk;
#pragma omp parallel for schedule(static)
    for (int64_t c = 0; c < chunks; ++c) each_output_in(c * chunk, std::min(n, (c + 1) * chunk), f);
  }

  // Whether windows of different indices along the first windowed
  // dimension never share an operand element (so scatters into them may
  // run in parallel).
  bool disjoint_along_first() const {
    if (taps_.empty()) return true;
    const Taps& t = taps_[0];
    for (size_t p = 0; p + 1 < t.start.size(); ++p)
      if (t.start[p + 1] - t.start[p] > 1) return false;
    return true;
  }
  int64_t first_extent() const { return out_.empty() ? 1 : out_[0]; }

 private:
  struct Taps {
    std::vector<int64_t> offsets;  // operand offsets of each index's window, concatenated
    std::vector<int64_t> start;    // where index p's begin in offsets
  };

  std::vector<int64_t> unravel(int64_t o) const {
    std::vector<int64_t> p(out_.size());
    for (int d = static_cast<int>(out_.size()) - 1; d >= 0; --d) {
      p[d] = out_[d] == 0 ? 0 : o % out_[d];
      o = out_[d] == 0 ? 0 : o / out_[d];
    }
    return p;
  }

  void list(size_t d, int64_t base, const std::vector<int64_t>& p, std::vector<int64_t>& offsets) const {
    if (d == taps_.size()) return offsets.push_back(base);
    const Taps& t = taps_[d];
    for (int64_t k = t.start[p[d]]; k < t.start[p[d] + 1]; ++k) list(d + 1, base + t.offsets[k], p, offsets);
  }

  Shape out_;
  std::vector<Taps> taps_;
  int64_t lanes_ = 1;
};

// out[l] = step(out[l], v[l]) for l < lanes.
template <class T, class Step>
void fold_lanes(T* __restrict out, const T* __restrict v, int64_t lanes, Step step) {
  for (int64_t l = 0; l < lanes; ++l) out[l] = step(out[l], v[l]);
}

#ifdef __SSE2__
// The same for f32 max (or min, when `min`), 4 lanes at a time: gcg_rmax's
// (gcg_rmin's) result, which the compiler does not vectorise for the
// baseline instruction set (its branches hold float operations it may not
// speculate): the first NaN stays, and of -0 and +0 max keeps +0 (their
// bits' AND) and min -0 (their OR). Max pooling ran 4x faster.
void fold_lanes_extremum(float* __restrict out, const float* __restrict v, int64_t lanes, bool min) {
  int64_t l = 0;
  for (; l + 4 <= lanes; l += 4) {
    const __m128 a = _mm_loadu_ps(out + l), x = _mm_loadu_ps(v + l);
    const __m128 better = min ? _mm_cmplt_ps(x, a) : _mm_cmpgt_ps(x, a);
    const __m128 take = _mm_andnot_ps(_mm_cmpunord_ps(a, a), _mm_or_ps(better, _mm_cmpunord_ps(x, x)));
    const __m128 equal = _mm_cmpeq_ps(x, a), tie = min ? _mm_or_ps(a, x) : _mm_and_ps(a, x);
    const __m128 kept = _mm_or_ps(_mm_and_ps(equal, tie), _mm_andnot_ps(equal, a));
    _mm_storeu_ps(out + l, _mm_or_ps(_mm_and_ps(take, x), _mm_andnot_ps(take, kept)));
  }
  for (; l < lanes; ++l) out[l] = min ? gcg_rmin<float>(out[l], v[l]) : gcg_rmax<float>(out[l], v[l]);
}
#endif

int64_t window_size(const KernelCall& call) {
  int64_t n = 1;
  for (int64_t w : ints_attr(call, "window_dimensions")) n *= w;
  return n;
}

void reduce_window(const KernelCall& call, Op reduction) {
  const Windows windows(call, call.inputs[0].type->shape, call.outputs[0].type->shape);
  const int64_t work = windows.outputs() * windows.lanes() * window_size(call);
  const DType dtype = call.inputs[0].type->dtype;
  auto fold = [&](auto tag, auto step) {
    using T = typename decltype(tag)::type;
    const T* x = in_ptr<T>(call, 0);
    T* y = out_ptr<T>(call, 0);
    const T start = reduction == Op::reduce_sum ? T(0) : identity<T>(reduction);
    const int64_t L = windows.lanes();
    windows.each_output(
        [&](int64_t o, const std::vector<int64_t>& offsets) {
          T* out = y + o * L;
          std::fill_n(out, L, start);
#ifdef __SSE2__
          if constexpr (std::is_same_v<T, float>)
            if (reduction == Op::reduce_max || reduction == Op::reduce_min) {
              for (int64_t at : offsets) fold_lanes_extremum(out, x + at, L, reduction == Op::reduce_min);
              return;
            }
#endif
          for (int64_t at : offsets) fold_lanes(out, x + at, L, step);
        },
        work);
  };
  if (ir::is_complex(dtype)) {
    auto add = [](auto a, auto v) { return a + v; };
    if (dtype == DType::c64) return fold(std::type_identity<std::complex<float>>{}, add);
    return fold(std::type_identity<std::complex<double>>{}, add);
  }
  visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    with_step<T>(reduction, [&](auto step) { fold(tag, step); });
  });
}

// Whether the selected value a stays selected over a later candidate v.
template <class T>
bool keeps(bool ge, T a, T v) {
  return ge ? a >= v : a <= v;
}

// One window element v against the lanes' selections so far: lane l takes
// v[l] (position k) unless the select keeps best[l]. Restrict pointers and
// unconditional stores, so the loop vectorises.
template <bool Ge, class T>
void select_step(const T* __restrict v, int64_t lanes, int32_t k, int32_t* __restrict which, T* __restrict best) {
  for (int64_t l = 0; l < lanes; ++l) {
    const T b = best[l], e = v[l];
    const int32_t w = which[l];
    const bool take = Ge ? !(b >= e) : !(b <= e);
    which[l] = take ? k : w;
    best[l] = take ? e : b;
  }
}

// which[l] = the position (in offsets) of the element lane l of a window
// selects, over its real elements' offsets (not empty); best[l] its value,
// kept beside it so the comparisons read no selected element back.
template <bool Ge, class T>
void select_lanes(const T* x, const std::vector<int64_t>& offsets, int64_t lanes, int32_t* which, T* best) {
  std::fill_n(which, lanes, 0);
  std::copy_n(x + offsets[0], lanes, best);
  for (size_t k = 1; k < offsets.size(); ++k)
    select_step<Ge>(x + offsets[k], lanes, static_cast<int32_t>(k), which, best);
}

// Calls f(l, operand offset) for each lane l with its selected element.
template <class T, class F>
void each_selected(const T* x, const std::vector<int64_t>& offsets, int64_t lanes, bool ge, F&& f) {
  if (offsets.empty()) return;
  thread_local std::vector<int32_t> which;
  thread_local std::vector<T> best;
  which.resize(static_cast<size_t>(lanes)), best.resize(static_cast<size_t>(lanes));
  if (ge)
    select_lanes<true>(x, offsets, lanes, which.data(), best.data());
  else
    select_lanes<false>(x, offsets, lanes, which.data(), best.data());
  for (int64_t l = 0; l < lanes; ++l) f(l, offsets[static_cast<size_t>(which[l])] + l);
}

template <class T>
void gather_typed(const KernelCall& call, const Windows& windows, bool ge) {
  const T* t = in_ptr<T>(call, 0);
  const T* x = in_ptr<T>(call, 1);
  T* y = out_ptr<T>(call, 0);
  const int64_t L = windows.lanes();
  windows.each_output(
      [&](int64_t o, const std::vector<int64_t>& offsets) {
        T* out = y + o * L;
        std::fill_n(out, L, T(0));
        each_selected(x, offsets, L, ge, [&](int64_t l, int64_t at) { out[l] = t[at]; });
      },
      windows.outputs() * L * window_size(call));
}

template <class T>
void scatter_typed(const KernelCall& call, const Windows& windows, bool ge) {
  const T* source = in_ptr<T>(call, 0);
  const T* x = in_ptr<T>(call, 1);
  T* y = out_ptr<T>(call, 0);
  std::fill_n(y, out_elements(call), T(0));
  const int64_t n = windows.outputs(), L = windows.lanes();
  if (n * L == 0) return;
  auto scatter = [&](int64_t o, const std::vector<int64_t>& offsets) {
    const T* src = source + o * L;
    each_selected(x, offsets, L, ge, [&](int64_t l, int64_t at) { y[at] += src[l]; });
  };
  // Overlapping windows add into shared elements: in order, one thread,
  // unless windows along the first windowed dimension are disjoint (pooling
  // over a batch).
  const int64_t rows = windows.first_extent(), per_row = n / rows;
  if (!windows.disjoint_along_first() || rows < 2 || n * L * window_size(call) < kParallelThreshold)
    return windows.each_output_in(0, n, scatter);
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) windows.each_output_in(r * per_row, (r + 1) * per_row, scatter);
}

// f(std::type_identity<T>{}) for the call's f32 or f64 operands (halves arrive widened).
template <class F>
void with_float_type(const KernelCall& call, F&& f) {
  const DType d = call.inputs[0].type->dtype;
  if (d == DType::f32) return f(std::type_identity<float>{});
  if (d == DType::f64) return f(std::type_identity<double>{});
  throw UnsupportedError(std::string(ir::op_name(call.op)) + ": no kernel for " + dtype_name(d));
}

}  // namespace

void reduce_window_sum_kernel(const KernelCall& call) { reduce_window(call, Op::reduce_sum); }
void reduce_window_max_kernel(const KernelCall& call) { reduce_window(call, Op::reduce_max); }
void reduce_window_min_kernel(const KernelCall& call) { reduce_window(call, Op::reduce_min); }

void select_and_gather_add_kernel(const KernelCall& call) {
  const Windows windows(call, call.inputs[1].type->shape, call.outputs[0].type->shape);
  const bool ge = ir::attr<std::string>(call.attrs, "select", call.op) == "ge";
  with_float_type(call, [&](auto tag) { gather_typed<typename decltype(tag)::type>(call, windows, ge); });
}

void select_and_scatter_add_kernel(const KernelCall& call) {
  const Windows windows(call, call.inputs[1].type->shape, call.inputs[0].type->shape);
  const bool ge = ir::attr<std::string>(call.attrs, "select", call.op) == "ge";
  with_float_type(call, [&](auto tag) { scatter_typed<typename decltype(tag)::type>(call, windows, ge); });
}

}  // namespace graft::interpreter
