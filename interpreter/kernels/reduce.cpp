// CPU kernels of reductions, arg-reductions and cumulative scans. Each output
// element reduces its own slice in a fixed order, so results do not depend on
// the number of threads; float sums in sum_order.h's order (ordered_sum.h).
#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>

#include "interpreter/kernels/layout.h"
#include "ir/attr_access.h"
#include "interpreter/kernels/loops.h"
#include "interpreter/kernels/ordered_sum.h"
#include "interpreter/kernels/reduce_step.h"
#include "interpreter/kernels/sum_order.h"

namespace graft::interpreter {
namespace {

using ir::Op;

// Splits the input's axes into kept (output) and reduced ones, with their strides.
struct ReductionPlan {
  Shape kept_shape, reduced_shape;
  std::vector<int64_t> kept_strides, reduced_strides;
  int64_t reduced_size = 1;
};

ReductionPlan plan(const Shape& in, const std::vector<bool>& reduced) {
  ReductionPlan p;
  std::vector<int64_t> strides = row_major_strides(in);
  for (size_t i = 0; i < in.size(); ++i) {
    if (reduced[i]) {
      p.reduced_shape.push_back(in[i]);
      p.reduced_strides.push_back(strides[i]);
      p.reduced_size *= in[i];
    } else {
      p.kept_shape.push_back(in[i]);
      p.kept_strides.push_back(strides[i]);
    }
  }
  return p;
}

std::vector<bool> reduced_axes(const KernelCall& call, const ir::Ints& axes) {
  std::vector<bool> r(call.inputs[0].type->rank(), false);
  for (int64_t a : axes) r[a] = true;
  return r;
}

// Calls f(base_offset, walk_over_reduced, out_index) for each output element.
template <class F>
void for_each_output(const ReductionPlan& p, int64_t n_out, F&& f) {
  parallel_ranges(n_out, [&](int64_t b, int64_t e) {
    StridedWalk kept(p.kept_shape, p.kept_strides);
    kept.seek(b);
    for (int64_t o = b; o < e; ++o, kept.next()) {
      StridedWalk red(p.reduced_shape, p.reduced_strides, kept.offset());
      f(red, o);
    }
  });
}

// The reduced axes as one contiguous run: the input is [outer, rows, inner].
bool contiguous_run(const Shape& shape, const std::vector<bool>& reduced, int64_t* outer, int64_t* rows, int64_t* inner) {
  int64_t first = -1, last = -1;
  for (size_t i = 0; i < reduced.size(); ++i)
    if (reduced[i]) {
      if (first < 0) first = static_cast<int64_t>(i);
      else if (last != static_cast<int64_t>(i) - 1) return false;
      last = static_cast<int64_t>(i);
    }
  if (first < 0) return false;
  *outer = *rows = *inner = 1;
  for (int64_t i = 0; i < static_cast<int64_t>(shape.size()); ++i)
    *(i < first ? outer : i <= last ? rows : inner) *= shape[static_cast<size_t>(i)];
  return true;
}

// When the reduced axes are one contiguous run, the input is [outer,
// reduced, inner] and each output folds `reduced` rows of its column, in the
// same order as the general walk (so results are identical), with unit-stride
// inner loops and no per-output setup.
template <class T, class Step>
bool reduce_contiguous_run(const Shape& shape, const std::vector<bool>& reduced, Op op, const T* x, T* y, Step step) {
  int64_t outer, rows, inner;
  if (!contiguous_run(shape, reduced, &outer, &rows, &inner)) return false;
  parallel_ranges(outer * inner, [&](int64_t b, int64_t e) {
    for (int64_t idx = b; idx < e;) {
      const int64_t o = idx / inner, k0 = idx % inner, k1 = std::min(inner, k0 + (e - idx));
      T* out = y + o * inner;
      for (int64_t k = k0; k < k1; ++k) out[k] = identity<T>(op);
      for (int64_t r = 0; r < rows; ++r) {
        const T* row = x + (o * rows + r) * inner;
        for (int64_t k = k0; k < k1; ++k) out[k] = step(out[k], row[k]);
      }
      idx += k1 - k0;
    }
  });
  return true;
}

// A float sum in sum_order's order: a contiguous run of reduced axes as rows
// or columns; other axes gathered per output (row-major over the reduced
// axes) and summed as a row.
template <class T>
void ordered_sum_typed(const KernelCall& call, const std::vector<bool>& reduced) {
  const Shape& shape = call.inputs[0].type->shape;
  const T* x = in_ptr<T>(call, 0);
  T* y = out_ptr<T>(call, 0);
  int64_t outer, rows, inner;
  if (contiguous_run(shape, reduced, &outer, &rows, &inner)) {
    sum_outer_rows_inner(call.inputs[0].type->dtype, x, outer, rows, inner, y);
    return;
  }
  ReductionPlan p = plan(shape, reduced);
  for_each_output(p, out_elements(call), [&](StridedWalk& red, int64_t o) {
    sum_order::RowSum<T> rs;
    T buf[sum_order::kRowBlock];
    for (int64_t r = 0; r < p.reduced_size;) {
      const int64_t n = std::min<int64_t>(sum_order::kRowBlock, p.reduced_size - r);
      for (int64_t k = 0; k < n; ++k, red.next()) buf[k] = x[red.offset()];
      rs.add(buf, n);
      r += n;
    }
    y[o] = rs.finish();
  });
}

template <class T>
void reduce_typed(const KernelCall& call) {
  const std::vector<bool> reduced = reduced_axes(call, ir::attr<ir::Ints>(call.attrs, "axes", call.op));
  const T* x = in_ptr<T>(call, 0);
  T* y = out_ptr<T>(call, 0);
  Op op = call.op;
  if constexpr (std::is_floating_point_v<T>) {
    if (ordered_sum(op, call.inputs[0].type->dtype)) return ordered_sum_typed<T>(call, reduced);
  }
  bool done = false;
  with_step<T>(op, [&](auto step) { done = reduce_contiguous_run<T>(call.inputs[0].type->shape, reduced, op, x, y, step); });
  if (done) return;
  ReductionPlan p = plan(call.inputs[0].type->shape, reduced);
  with_step<T>(op, [&](auto step) {
    for_each_output(p, out_elements(call), [&](StridedWalk& red, int64_t o) {
      T acc = identity<T>(op);
      for (int64_t r = 0; r < p.reduced_size; ++r, red.next()) acc = step(acc, x[red.offset()]);
      y[o] = acc;
    });
  });
}

// reduce_prod and cumprod of complex numbers (the linear reductions see
// them as pairs of reals, kernel.cpp; max and min refuse them), in the
// order of the real kernels: row-major over the reduced axes.
template <class C>
void complex_prod_typed(const KernelCall& call) {
  const std::vector<bool> reduced = reduced_axes(call, ir::attr<ir::Ints>(call.attrs, "axes", call.op));
  const C* x = in_ptr<C>(call, 0);
  C* y = out_ptr<C>(call, 0);
  ReductionPlan p = plan(call.inputs[0].type->shape, reduced);
  for_each_output(p, out_elements(call), [&](StridedWalk& red, int64_t o) {
    C acc(1);
    for (int64_t r = 0; r < p.reduced_size; ++r, red.next()) acc *= x[red.offset()];
    y[o] = acc;
  });
}

template <class C>
void complex_cumprod_typed(const KernelCall& call) {
  const int64_t axis = ir::attr<int64_t>(call.attrs, "axis", call.op);
  const bool reverse = ir::attr<int64_t>(call.attrs, "reverse", call.op) != 0;
  const Shape& shape = call.inputs[0].type->shape;
  std::vector<bool> r(shape.size(), false);
  r[axis] = true;
  ReductionPlan p = plan(shape, r);
  const C* x = in_ptr<C>(call, 0);
  C* y = out_ptr<C>(call, 0);
  const int64_t n = shape[axis], stride = p.reduced_strides[0];
  const int64_t lines = p.reduced_size ? out_elements(call) / p.reduced_size : 0;
  for_each_output(p, lines, [&](StridedWalk& red, int64_t) {
    const int64_t base = red.offset();
    C acc(1);
    for (int64_t k = 0; k < n; ++k) {
      const int64_t i = base + (reverse ? n - 1 - k : k) * stride;
      acc = k == 0 ? x[i] : acc * x[i];
      y[i] = acc;
    }
  });
}

// f(tag) for a complex dtype's std::complex type; false for other dtypes.
template <class F>
bool visit_complex(DType d, F&& f) {
  if (d == DType::c64) return f(std::type_identity<std::complex<float>>{}), true;
  if (d == DType::c128) return f(std::type_identity<std::complex<double>>{}), true;
  return false;
}

void reduce_kernel(const KernelCall& call) {
  if (visit_complex(call.inputs[0].type->dtype,
                    [&](auto tag) { complex_prod_typed<typename decltype(tag)::type>(call); }))
    return;
  visit_dtype(call.inputs[0].type->dtype, [&](auto tag) { reduce_typed<typename decltype(tag)::type>(call); });
}

// argmax / argmin: the first index of the extreme value; a NaN counts as the extreme.
template <class T, class I>
void arg_typed(const KernelCall& call) {
  int64_t axis = ir::attr<int64_t>(call.attrs, "axis", call.op);
  std::vector<bool> r(call.inputs[0].type->rank(), false);
  r[axis] = true;
  ReductionPlan p = plan(call.inputs[0].type->shape, r);
  const T* x = in_ptr<T>(call, 0);
  I* y = out_ptr<I>(call, 0);
  bool is_max = call.op == Op::argmax;
  for_each_output(p, out_elements(call), [&](StridedWalk& red, int64_t o) {
    T best = x[red.offset()];
    int64_t best_i = 0;
    red.next();
    for (int64_t i = 1; i < p.reduced_size; ++i, red.next()) {
      T v = x[red.offset()];
      bool better = is_max ? v > best : v < best;
      if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(best)) better = false;
        else if (std::isnan(v)) better = true;
      }
      if (better) {
        best = v;
        best_i = i;
      }
    }
    y[o] = static_cast<I>(best_i);
  });
}

void arg_kernel(const KernelCall& call) {
  visit_dtype(call.inputs[0].type->dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (call.outputs[0].type->dtype == DType::i32) arg_typed<T, int32_t>(call);
    else arg_typed<T, int64_t>(call);
  });
}

template <class T>
void cumulative_typed(const KernelCall& call) {
  int64_t axis = ir::attr<int64_t>(call.attrs, "axis", call.op);
  bool reverse = ir::attr<int64_t>(call.attrs, "reverse", call.op) != 0;
  const Shape& shape = call.inputs[0].type->shape;
  std::vector<bool> r(shape.size(), false);
  r[axis] = true;
  ReductionPlan p = plan(shape, r);
  const T* x = in_ptr<T>(call, 0);
  T* y = out_ptr<T>(call, 0);
  int64_t n = shape[axis], stride = p.reduced_strides[0];
  Op op = call.op;
  int64_t lines = p.reduced_size ? out_elements(call) / p.reduced_size : 0;
  for_each_output(p, lines, [&](StridedWalk& red, int64_t) {
    int64_t base = red.offset();
    T acc{};
    for (int64_t k = 0; k < n; ++k) {
      int64_t i = base + (reverse ? n - 1 - k : k) * stride;
      T v = x[i];
      if (k == 0) acc = v;
      else if (op == Op::cumsum) acc = gcg_wrap_add<T>(acc, v);
      else if (op == Op::cumprod) acc = gcg_wrap_mul<T>(acc, v);
      else if (op == Op::cummax)
        acc = gcg_rmax<T>(acc, v);
      else
        acc = gcg_rmin<T>(acc, v);
      y[i] = acc;
    }
  });
}

void cumulative_kernel(const KernelCall& call) {
  if (visit_complex(call.inputs[0].type->dtype,
                    [&](auto tag) { complex_cumprod_typed<typename decltype(tag)::type>(call); }))
    return;
  visit_dtype(call.inputs[0].type->dtype, [&](auto tag) { cumulative_typed<typename decltype(tag)::type>(call); });
}

}  // namespace

void reduce_sum_kernel(const KernelCall& call) { reduce_kernel(call); }
void reduce_max_kernel(const KernelCall& call) { reduce_kernel(call); }
void reduce_min_kernel(const KernelCall& call) { reduce_kernel(call); }
void reduce_prod_kernel(const KernelCall& call) { reduce_kernel(call); }
void reduce_and_kernel(const KernelCall& call) { reduce_kernel(call); }
void reduce_or_kernel(const KernelCall& call) { reduce_kernel(call); }
void argmax_kernel(const KernelCall& call) { arg_kernel(call); }
void argmin_kernel(const KernelCall& call) { arg_kernel(call); }
void cumsum_kernel(const KernelCall& call) { cumulative_kernel(call); }
void cumprod_kernel(const KernelCall& call) { cumulative_kernel(call); }
void cummax_kernel(const KernelCall& call) { cumulative_kernel(call); }
void cummin_kernel(const KernelCall& call) { cumulative_kernel(call); }

// ---- folds for the tiled evaluator (reduce_step.h)

// dst[row] = fold of row `row` (of `len` elements) onto dst[row].
void fold_rows(ir::Op op, DType d, const void* x, int64_t rows, int64_t len, void* dst) {
  visit_dtype(d, [&](auto tag) {
    using T = typename decltype(tag)::type;
    with_step<T>(op, [&](auto step) {
      const T* in = static_cast<const T*>(x);
      T* out = static_cast<T*>(dst);
      for (int64_t r = 0; r < rows; ++r) {
        T acc = out[r];
        const T* row = in + r * len;
        for (int64_t k = 0; k < len; ++k) acc = step(acc, row[k]);
        out[r] = acc;
      }
    });
  });
}

// dst[j] = fold of column j over `rows` rows of `len` elements onto dst[j].
void fold_columns(ir::Op op, DType d, const void* x, int64_t rows, int64_t len, void* dst) {
  visit_dtype(d, [&](auto tag) {
    using T = typename decltype(tag)::type;
    with_step<T>(op, [&](auto step) {
      const T* in = static_cast<const T*>(x);
      T* out = static_cast<T*>(dst);
      for (int64_t r = 0; r < rows; ++r) {
        const T* row = in + r * len;
        for (int64_t k = 0; k < len; ++k) out[k] = step(out[k], row[k]);
      }
    });
  });
}

void fill_identity(ir::Op op, DType d, void* dst, int64_t n) {
  visit_dtype(d, [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::fill_n(static_cast<T*>(dst), n, identity<T>(op));
  });
}

}  // namespace graft::interpreter
