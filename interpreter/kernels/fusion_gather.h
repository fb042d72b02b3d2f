// The tiled fusion evaluator's element moves (fusion.cpp): strided copies
// and fills of fused values (at most 8 bytes each), and the gather that reads
// a view of the iteration space through its strides.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "interpreter/kernels/layout.h"
#include "ir/dtype.h"
#include "ir/fused_plan.h"

namespace graft::interpreter::tiled {

// ---- copies

// dst[i] = src[i * stride] for i < n, element size `size`.
inline void strided_copy(size_t size, const uint8_t* src, int64_t stride, uint8_t* dst, int64_t n) {
  auto run = [&](auto tag) {
    using U = typename decltype(tag)::type;
    const U* s = reinterpret_cast<const U*>(src);
    U* o = reinterpret_cast<U*>(dst);
    if (stride == 1)
      std::memcpy(o, s, static_cast<size_t>(n) * sizeof(U));
    else if (stride == 0)
      std::fill_n(o, n, *s);
    else
      for (int64_t k = 0; k < n; ++k) o[k] = s[k * stride];
  };
  switch (size) {
    case 1: return run(std::type_identity<uint8_t>{});
    case 2: return run(std::type_identity<uint16_t>{});
    case 4: return run(std::type_identity<uint32_t>{});
    default: return run(std::type_identity<uint64_t>{});  // fused values are at most 8 bytes (transforms/fusion.cpp)
  }
}

inline void fill_uniform(size_t size, const uint64_t& bits, uint8_t* dst, int64_t n) {
  strided_copy(size, reinterpret_cast<const uint8_t*>(&bits), 0, dst, n);
}

// A view of N elements read through strides: out[i] = src[offset of i],
// walked as rows of an inner run (its merged axes; a copy when the run's
// stride is 1, a fill when 0).
struct Gather {
  const uint8_t* src = nullptr;
  size_t size = 4;
  Shape outer;
  std::vector<int64_t> outer_strides;
  int64_t inner = 1, inner_stride = 0;

  void run(int64_t lo, int64_t len, uint8_t* dst) const {
    StridedWalk rows(outer, outer_strides);
    rows.seek(lo / inner);
    for (int64_t j = lo; j < lo + len;) {
      const int64_t col = j % inner, n = std::min(inner - col, lo + len - j);
      strided_copy(size, src + static_cast<size_t>((rows.offset() + col * inner_stride)) * size, inner_stride,
                   dst + static_cast<size_t>(j - lo) * size, n);
      j += n;
      if (col + n == inner) rows.next();
    }
  }
};

inline Gather make_gather(const ir::FusedValue& view, const uint8_t* src) {
  Gather g;
  g.src = src;
  g.size = ir::dtype_size(view.dtype);
  Shape shape;
  std::vector<int64_t> st;
  ir::merged_axes(view, &shape, &st);
  if (!shape.empty()) {
    g.inner = shape.back();
    g.inner_stride = st.back();
    shape.pop_back();
    st.pop_back();
  }
  g.outer = shape;
  g.outer_strides = st;
  return g;
}

}  // namespace graft::interpreter::tiled
