// CPU kernels of layout ops. They move elements without looking at them, so
// each is written once per element size (1, 4 or 8 bytes).
#include <algorithm>
#include <cstring>

#include "interpreter/kernels/layout.h"
#include "interpreter/kernels/loops.h"
#include "ir/dtype.h"

namespace graft::interpreter {
namespace {

using ir::Ints;
using ir::Op;

// A c128 element, moved as a whole.
struct Bytes16 {
  uint64_t lo, hi;
};

// Calls f(std::type_identity<U>{}) with U an unsigned type of the dtype's size.
template <class F>
void visit_size(DType d, F&& f) {
  switch (ir::dtype_size(d)) {
    case 1: return f(std::type_identity<uint8_t>{});
    case 2: return f(std::type_identity<uint16_t>{});
    case 4: return f(std::type_identity<uint32_t>{});
    case 8: return f(std::type_identity<uint64_t>{});
    default: return f(std::type_identity<Bytes16>{});
  }
}

// out[j] = in[offset of j under (strides, base)] for every output element j.
// Output axes that are contiguous in the input merge, and the last axis runs
// as a tight loop (a copy when its stride is 1, a fill when it is 0), so the
// per-element index walk happens once per row instead of once per element.
void gather_strided(const KernelCall& call, const std::vector<int64_t>& strides, int64_t base) {
  Shape shape;
  std::vector<int64_t> st;
  const Shape& out_shape = call.outputs[0].type->shape;
  merge_axes(out_shape, strides, &shape, &st);
  const int64_t inner = shape.empty() ? 1 : shape.back();
  const int64_t step = st.empty() ? 0 : st.back();
  if (!shape.empty()) {
    shape.pop_back();
    st.pop_back();
  }
  visit_size(call.outputs[0].type->dtype, [&](auto tag) {
    using U = typename decltype(tag)::type;
    const U* x = in_ptr<U>(call, 0);
    U* y = out_ptr<U>(call, 0);
    parallel_ranges(out_elements(call), [&](int64_t b, int64_t e) {
      StridedWalk rows(shape, st);
      rows.seek(b / inner, base);
      for (int64_t j = b; j < e;) {
        const int64_t col = j % inner, n = std::min(inner - col, e - j);
        const U* src = x + rows.offset() + col * step;
        if (step == 1) {
          std::memcpy(y + j, src, static_cast<size_t>(n) * sizeof(U));
        } else if (step == 0) {
          std::fill(y + j, y + j + n, *src);
        } else {
          for (int64_t k = 0; k < n; ++k) y[j + k] = src[k * step];
        }
        j += n;
        if (col + n == inner) rows.next();
      }
    });
  });
}

}  // namespace

void broadcast_in_dim_kernel(const KernelCall& call) {
  const Shape& in = call.inputs[0].type->shape;
  std::vector<int64_t> in_strides = row_major_strides(in);
  std::vector<int64_t> strides(call.outputs[0].type->rank(), 0);
  const Ints& dims = ints_attr(call, "broadcast_dimensions");
  for (size_t i = 0; i < dims.size(); ++i)
    if (in[i] != 1) strides[dims[i]] = in_strides[i];
  gather_strided(call, strides, 0);
}

void reshape_kernel(const KernelCall& call) {
  size_t bytes = static_cast<size_t>(out_elements(call)) * ir::dtype_size(call.outputs[0].type->dtype);
  if (bytes) std::memcpy(call.outputs[0].data, call.inputs[0].data, bytes);
}

// Batches of matrices [B, R, C] -> [B, C, R] in square tiles: a strided
// gather would read each input element from a new cache line (and page, for
// wide rows); a tile is read and written within a few lines each.
template <class U>
void transpose_tiles(const U* x, U* y, int64_t batches, int64_t rows, int64_t cols) {
  constexpr int64_t T = 64 / sizeof(U) >= 16 ? 32 : 16;  // tile edge in elements
  const int64_t tr = (rows + T - 1) / T, tc = (cols + T - 1) / T, per = T * T;
  // Ranges of tiles * per "elements": parallel_ranges' chunks are multiples
  // of per, so every range is whole tiles.
  parallel_ranges(batches * tr * tc * per, [&](int64_t lo, int64_t hi) {
    for (int64_t t = lo / per; t < hi / per; ++t) {
      const int64_t b = t / (tr * tc), r0 = (t / tc) % tr * T, c0 = t % tc * T;
      const U* src = x + b * rows * cols;
      U* dst = y + b * rows * cols;
      const int64_t r1 = std::min(rows, r0 + T), c1 = std::min(cols, c0 + T);
      for (int64_t c = c0; c < c1; ++c)
        for (int64_t r = r0; r < r1; ++r) dst[c * rows + r] = src[r * cols + c];
    }
  });
}

void transpose_kernel(const KernelCall& call) {
  std::vector<int64_t> in_strides = row_major_strides(call.inputs[0].type->shape);
  const Ints& perm = ints_attr(call, "permutation");
  // The last two axes swapped, the others in place: tiles.
  const size_t rank = perm.size();
  bool last_two = rank >= 2 && perm[rank - 1] == static_cast<int64_t>(rank - 2) &&
                  perm[rank - 2] == static_cast<int64_t>(rank - 1);
  for (size_t i = 0; i + 2 < rank && last_two; ++i) last_two = perm[i] == static_cast<int64_t>(i);
  if (last_two) {
    const Shape& in = call.inputs[0].type->shape;
    const int64_t rows = in[rank - 2], cols = in[rank - 1];
    if (rows > 1 && cols > 1) {
      const int64_t batches = rows * cols == 0 ? 0 : out_elements(call) / (rows * cols);
      visit_size(call.outputs[0].type->dtype, [&](auto tag) {
        using U = typename decltype(tag)::type;
        transpose_tiles<U>(in_ptr<U>(call, 0), out_ptr<U>(call, 0), batches, rows, cols);
      });
      return;
    }
  }
  std::vector<int64_t> strides(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) strides[i] = in_strides[perm[i]];
  gather_strided(call, strides, 0);
}

void rev_kernel(const KernelCall& call) {
  const Shape& shape = call.inputs[0].type->shape;
  std::vector<int64_t> strides = row_major_strides(shape);
  int64_t base = 0;
  for (int64_t d : ints_attr(call, "dimensions")) {
    if (shape[d] == 0) return;
    base += (shape[d] - 1) * strides[d];
    strides[d] = -strides[d];
  }
  gather_strided(call, strides, base);
}

void slice_kernel(const KernelCall& call) {
  std::vector<int64_t> in_strides = row_major_strides(call.inputs[0].type->shape);
  const Ints& start = ints_attr(call, "start_indices");
  const Ints& step = ints_attr(call, "strides");
  std::vector<int64_t> strides(in_strides.size());
  int64_t base = 0;
  for (size_t i = 0; i < strides.size(); ++i) {
    strides[i] = in_strides[i] * step[i];
    base += start[i] * in_strides[i];
  }
  gather_strided(call, strides, base);
}

void concatenate_kernel(const KernelCall& call) {
  int64_t dim = int_attr(call, "dimension");
  std::vector<int64_t> out_strides = row_major_strides(call.outputs[0].type->shape);
  visit_size(call.outputs[0].type->dtype, [&](auto tag) {
    using U = typename decltype(tag)::type;
    U* y = out_ptr<U>(call, 0);
    int64_t offset = 0;
    for (size_t k = 0; k < call.inputs.size(); ++k) {
      const Shape& s = call.inputs[k].type->shape;
      const U* x = in_ptr<U>(call, k);
      int64_t n = call.inputs[k].type->num_elements();
      StridedWalk walk(s, out_strides, offset * out_strides[dim]);
      for (int64_t i = 0; i < n; ++i, walk.next()) y[walk.offset()] = x[i];
      offset += s[dim];
    }
  });
}

// Fills with the padding value, then places each input element at
// low + i * (interior + 1) along every axis, skipping those cropped away by
// negative padding.
void pad_kernel(const KernelCall& call) {
  const Shape& in = call.inputs[0].type->shape;
  const Shape& out = call.outputs[0].type->shape;
  const Ints& lo = ints_attr(call, "padding_low");
  const Ints& interior = ints_attr(call, "padding_interior");
  std::vector<int64_t> out_strides = row_major_strides(out);
  visit_size(call.outputs[0].type->dtype, [&](auto tag) {
    using U = typename decltype(tag)::type;
    const U* x = in_ptr<U>(call, 0);
    U value = *in_ptr<U>(call, 1);
    U* y = out_ptr<U>(call, 0);
    int64_t n_out = out_elements(call);
    for (int64_t j = 0; j < n_out; ++j) y[j] = value;
    int64_t n_in = call.inputs[0].type->num_elements();
    std::vector<int64_t> index(in.size(), 0);
    for (int64_t i = 0; i < n_in; ++i) {
      int64_t offset = 0;
      bool inside = true;
      for (size_t d = 0; d < in.size() && inside; ++d) {
        int64_t pos = lo[d] + index[d] * (interior[d] + 1);
        inside = pos >= 0 && pos < out[d];
        offset += pos * out_strides[d];
      }
      if (inside) y[offset] = x[i];
      for (int d = static_cast<int>(in.size()) - 1; d >= 0; --d) {
        if (++index[d] < in[d]) break;
        index[d] = 0;
      }
    }
  });
}

}  // namespace graft::interpreter
