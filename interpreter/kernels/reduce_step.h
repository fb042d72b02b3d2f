// A reduction's identity and combining step, shared by the reduce kernels
// and the tiled evaluator of fused kernels (so both fold alike, bit for bit),
// and the row and column folds the tiled evaluator runs on finished tiles.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "interpreter/kernels/scalar_ops.h"
#include "ir/dtype.h"
#include "ir/op.h"

namespace graft::interpreter {

// The value a reduction starts from (its result over an empty set).
template <class T>
T identity(ir::Op op) {
  using L = std::numeric_limits<T>;
  switch (op) {
    case ir::Op::reduce_sum: case ir::Op::reduce_or: return T(0);
    case ir::Op::reduce_prod: return T(1);
    case ir::Op::reduce_and:
      if constexpr (std::is_same_v<T, bool>) return true;
      else if constexpr (std::is_integral_v<T>) return static_cast<T>(~T(0));
      else return T(0);
    case ir::Op::reduce_max: return L::has_infinity ? -L::infinity() : L::lowest();
    default: return L::has_infinity ? L::infinity() : L::max();
  }
}

// Calls f(step) with step(acc, v) the reduction's combining function.
template <class T, class F>
void with_step(ir::Op op, F&& f) {
  constexpr bool fp = std::is_floating_point_v<T>;
  switch (op) {
    case ir::Op::reduce_sum: return f([](T a, T v) { return gcg_wrap_add<T>(a, v); });
    case ir::Op::reduce_prod: return f([](T a, T v) { return gcg_wrap_mul<T>(a, v); });
    case ir::Op::reduce_max: return f([](T a, T v) { return gcg_rmax<T>(a, v); });
    case ir::Op::reduce_min: return f([](T a, T v) { return gcg_rmin<T>(a, v); });
    case ir::Op::reduce_and:
      return f([](T a, T v) {
        if constexpr (fp) return a;
        else return static_cast<T>(a & v);
      });
    default:  // reduce_or
      return f([](T a, T v) {
        if constexpr (fp) return a;
        else return static_cast<T>(a | v);
      });
  }
}

// dst[row] = fold of row `row` (of `len` elements) onto dst[row].
void fold_rows(ir::Op op, DType d, const void* x, int64_t rows, int64_t len, void* dst);
// dst[j] = fold of column j over `rows` rows of `len` elements onto dst[j].
void fold_columns(ir::Op op, DType d, const void* x, int64_t rows, int64_t len, void* dst);
// dst[0..n) = the reduction's identity.
void fill_identity(ir::Op op, DType d, void* dst, int64_t n);

}  // namespace graft::interpreter
