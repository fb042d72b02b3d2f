// CPU kernel of sort: each line along `dimension` is ordered by the first
// num_keys operands lexicographically (NaN after every number, as NumPy),
// and every operand is permuted alike. Always stable, which also satisfies
// is_stable = 0.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <numeric>

#include "interpreter/kernels/layout.h"
#include "ir/attr_access.h"
#include "interpreter/kernels/loops.h"

namespace graft::interpreter {
namespace {

// -1, 0, 1 comparing elements at two offsets of one operand.
using Compare = std::function<int(int64_t, int64_t)>;

Compare make_compare(const KernelIn& in) {
  return visit_dtype(in.type->dtype, [&](auto tag) -> Compare {
    using T = typename decltype(tag)::type;
    const T* x = static_cast<const T*>(in.data);
    return [x](int64_t a, int64_t b) {
      T u = x[a], v = x[b];
      if constexpr (std::is_floating_point_v<T>) {
        bool un = std::isnan(u), vn = std::isnan(v);
        if (un || vn) return un == vn ? 0 : (un ? 1 : -1);
      }
      return u < v ? -1 : (v < u ? 1 : 0);
    };
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

}  // namespace graft::interpreter
