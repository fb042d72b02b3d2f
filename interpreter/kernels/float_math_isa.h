// The body of one instruction set's float math table: included once by
// float_math_baseline.cpp, float_math_avx2.cpp and float_math_avx512.cpp,
// each compiled with its own -m flags, after defining
//   GRAFT_FLOAT_ISA        the FloatIsa it is built for
//   GRAFT_FLOAT_ISA_TABLE  the name of the function returning its table
//
// The files instantiate the same Eigen templates with different instruction
// sets. Inline functions are merged across object files by the linker, which
// could hand an AVX-512 instantiation to a baseline caller; so each file
// renames Eigen's namespace (the `Eigen` macro below) and keeps its own code
// in an anonymous namespace. tests/runtime/float_math_test.cpp checks that
// these objects export nothing else that another object could share.
#pragma once

#define Eigen GRAFT_FLOAT_ISA_EIGEN
#include <Eigen/Core>

#include <cmath>
#include <cstring>

#include "interpreter/kernels/float_math.h"

namespace graft::interpreter {
namespace {

template <class T>
using EVec = Eigen::Array<T, Eigen::Dynamic, 1>;

// The widest packet of any table, in elements: full stretches of it take
// every table's packet path.
template <class T>
inline constexpr int64_t kLanes = 64 / sizeof(T);

// Runs expr over [0, n) so that every element takes Eigen's packet path:
// whole packets straight from x into an aligned y, the rest (a misaligned y,
// the last partial packet) through an aligned buffer padded with zeros.
template <class T, class Expr>
void apply(const T* x, T* y, int64_t n, const Expr& expr) {
  constexpr int64_t L = kLanes<T>;
  int64_t done = 0;
  if (reinterpret_cast<uintptr_t>(y) % 64 == 0) {
    done = n - n % L;
    if (done > 0) {
      Eigen::Map<const EVec<T>> X(x, done);
      Eigen::Map<EVec<T>, Eigen::Aligned64> Y(y, done);
      Y = expr(X);
    }
  }
  alignas(64) T in[8 * L], out[8 * L];
  while (done < n) {
    const int64_t len = std::min<int64_t>(n - done, 8 * L), padded = (len + L - 1) / L * L;
    std::memcpy(in, x + done, static_cast<size_t>(len) * sizeof(T));
    for (int64_t k = len; k < padded; ++k) in[k] = T(0);
    Eigen::Map<const EVec<T>, Eigen::Aligned64> X(in, padded);
    Eigen::Map<EVec<T>, Eigen::Aligned64> Y(out, padded);
    Y = expr(X);
    std::memcpy(y + done, out, static_cast<size_t>(len) * sizeof(T));
    done += len;
  }
}

#define GRAFT_FLOAT_ISA_FN(name, expr)                                        \
  template <class T>                                                          \
  void name##_fn(const T* x, T* y, int64_t n) {                               \
    apply(x, y, n, [](const auto& X) { return expr; });                      \
  }
GRAFT_FLOAT_MATH_OPS(GRAFT_FLOAT_ISA_FN)
#undef GRAFT_FLOAT_ISA_FN

}  // namespace

const FloatMathTable& GRAFT_FLOAT_ISA_TABLE() {
#define GRAFT_FLOAT_ISA_F32(name, expr) &name##_fn<float>,
#define GRAFT_FLOAT_ISA_F64(name, expr) &name##_fn<double>,
  static const FloatMathTable table{GRAFT_FLOAT_ISA,
                                    {GRAFT_FLOAT_MATH_OPS(GRAFT_FLOAT_ISA_F32)},
                                    {GRAFT_FLOAT_MATH_OPS(GRAFT_FLOAT_ISA_F64)}};
#undef GRAFT_FLOAT_ISA_F32
#undef GRAFT_FLOAT_ISA_F64
  return table;
}

}  // namespace graft::interpreter

#undef Eigen
