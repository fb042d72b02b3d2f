// CPU kernels of sort (each line along `dimension` ordered by the first
// num_keys operands lexicographically, NaN after every number, as NumPy,
// complex numbers by real then imaginary part, and
// every operand permuted alike; always stable, which also satisfies
// is_stable = 0) and top_k (a partial selection of each last-axis line).
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <functional>
#include <numeric>

#include "graft/errors.h"
#include "interpreter/kernels/layout.h"
#include "interpreter/kernels/loops.h"
#include "ir/attr_access.h"

namespace graft::interpreter {
namespace {

// -1, 0, 1 comparing elements at two offsets of one operand.
using Compare = std::function<int(int64_t, int64_t)>;

// Floats: NaN after every number (equal to another NaN).
template <class T>
int compare_values(T u, T v) {
  if constexpr (std::is_floating_point_v<T>) {
    const bool un = std::isnan(u), vn = std::isnan(v);
    if (un || vn) return un == vn ? 0 : (un ? 1 : -1);
  }
  return u < v ? -1 : (v < u ? 1 : 0);
}

Compare make_compare(const KernelIn& in) {
  // Complex keys order by the real part, then the imaginary part, as lax.sort.
  if (ir::is_complex(in.type->dtype)) {
    auto by_parts = [&](auto* x) -> Compare {
      return [x](int64_t a, int64_t b) {
        const int r = compare_values(x[a].real(), x[b].real());
        return r ? r : compare_values(x[a].imag(), x[b].imag());
      };
    };
    if (in.type->dtype == DType::c64) return by_parts(static_cast<const std::complex<float>*>(in.data));
    return by_parts(static_cast<const std::complex<double>*>(in.data));
  }
  return visit_dtype(in.type->dtype, [&](auto tag) -> Compare {
    using T = typename decltype(tag)::type;
    const T* x = static_cast<const T*>(in.data);
    return [x](int64_t a, int64_t b) { return compare_values(x[a], x[b]); };
  });
}

}  // namespace

void sort_kernel(const KernelCall& call) {
  const Shape& shape = call.inputs[0].type->shape;
  int64_t dim = ir::attr<int64_t>(call.attrs, "dimension", call.op);
  int64_t num_keys = ir::attr<int64_t>(call.attrs, "num_keys", call.op);
  std::vector<int64_t> strides = row_major_strides(shape);
  int64_t n = shape[dim], stride = strides[dim];
  int64_t total = call.inputs[0].type->num_elements();
  if (total == 0) return;
  int64_t lines = total / n;
  Shape outer = shape;
  outer[dim] = 1;
  std::vector<int64_t> outer_strides = strides;

  std::vector<Compare> keys;
  for (int64_t k = 0; k < num_keys; ++k) keys.push_back(make_compare(call.inputs[k]));

  parallel_ranges(lines, [&](int64_t b, int64_t e) {
    std::vector<int64_t> perm(n);
    StridedWalk walk(outer, outer_strides);
    walk.seek(b);
    for (int64_t line = b; line < e; ++line, walk.next()) {
      int64_t base = walk.offset();
      std::iota(perm.begin(), perm.end(), 0);
      std::stable_sort(perm.begin(), perm.end(), [&](int64_t p, int64_t q) {
        for (const Compare& c : keys) {
          int r = c(base + p * stride, base + q * stride);
          if (r) return r < 0;
        }
        return false;
      });
      for (size_t k = 0; k < call.inputs.size(); ++k) {
        size_t elem = ir::dtype_size(call.inputs[k].type->dtype);
        const auto* x = static_cast<const uint8_t*>(call.inputs[k].data);
        auto* y = static_cast<uint8_t*>(call.outputs[k].data);
        for (int64_t i = 0; i < n; ++i)
          std::memcpy(y + (base + i * stride) * elem, x + (base + perm[i] * stride) * elem, elem);
      }
    }
  });
}

// The k largest of each line along the last axis, largest first, and their
// indices: NaN counts as the largest and equal values keep their order, as
// lax.top_k. A partial sort of the line's indices, O(n log k).
void top_k_kernel(const KernelCall& call) {
  const ir::ValueType& t = *call.inputs[0].type;
  const int64_t n = t.shape.back(), k = ir::attr<int64_t>(call.attrs, "k", call.op);
  const int64_t lines = n == 0 ? 0 : t.num_elements() / n;
  if (k == 0 || lines == 0) return;
  visit_dtype(t.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      throw UnsupportedError("top_k: no kernel for bool");
    } else {
      const T* x = static_cast<const T*>(call.inputs[0].data);
      T* values = static_cast<T*>(call.outputs[0].data);
      int32_t* indices = static_cast<int32_t*>(call.outputs[1].data);
      parallel_ranges(lines, [&](int64_t b, int64_t e) {
        std::vector<int32_t> order(static_cast<size_t>(n));
        for (int64_t line = b; line < e; ++line) {
          const T* row = x + line * n;
          std::iota(order.begin(), order.end(), 0);
          // a before b: larger, or NaN and b not, or +0 and b -0 (as max
          // orders them, so the first value is max's), or equal and earlier
          auto before = [row](int32_t a, int32_t b) {
            const T u = row[a], v = row[b];
            if constexpr (std::is_floating_point_v<T>) {
              const bool un = std::isnan(u), vn = std::isnan(v);
              if (un || vn) return un && !vn ? true : (un == vn ? a < b : false);
              if (u == 0 && v == 0 && std::signbit(u) != std::signbit(v)) return !std::signbit(u);
            }
            return u > v || (u == v && a < b);
          };
          std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
          for (int64_t i = 0; i < k; ++i) {
            values[line * k + i] = row[order[static_cast<size_t>(i)]];
            indices[line * k + i] = order[static_cast<size_t>(i)];
          }
        }
      });
    }
  });
}

}  // namespace graft::interpreter
