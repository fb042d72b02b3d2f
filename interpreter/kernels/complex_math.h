// The elementwise ops JAX defines on complex numbers, as the interpreter's
// kernels call them: complex_math<op>::apply is complex_ops.h's gcg_c_<ident>
// (the one definition the CPU code generator emits calls of too).
// complex_math<op>::defined says whether an op has one; ops.def's `dtypes`
// column lets complex operands reach only those that do (INEXACT,
// ALL_NUMBERS, SIGNED, ANY comparisons).
#pragma once

#include "interpreter/kernels/complex_ops.h"
#include "ir/op.h"

namespace graft::interpreter {

template <ir::Op op>
struct complex_math {
  static constexpr bool defined = false;
};

#define GRAFT_COMPLEX_UNARY(ident)        \
  template <>                             \
  struct complex_math<ir::Op::ident> {    \
    static constexpr bool defined = true; \
    template <class T>                    \
    static auto apply(T x) {              \
      return gcg_c_##ident(x);            \
    }                                     \
  };
#define GRAFT_COMPLEX_BINARY(ident)       \
  template <>                             \
  struct complex_math<ir::Op::ident> {    \
    static constexpr bool defined = true; \
    template <class T>                    \
    static auto apply(T x, T y) {         \
      return gcg_c_##ident(x, y);         \
    }                                     \
  };
GCG_COMPLEX_UNARY_OPS(GRAFT_COMPLEX_UNARY)
GCG_COMPLEX_BINARY_OPS(GRAFT_COMPLEX_BINARY)
#undef GRAFT_COMPLEX_UNARY
#undef GRAFT_COMPLEX_BINARY

// complex_math<op>::defined for an op known at run time.
constexpr bool has_complex_fn(ir::Op op) {
  switch (op) {
#define GRAFT_COMPLEX_CASE(ident) case ir::Op::ident:
    GCG_COMPLEX_UNARY_OPS(GRAFT_COMPLEX_CASE)
    GCG_COMPLEX_BINARY_OPS(GRAFT_COMPLEX_CASE)
#undef GRAFT_COMPLEX_CASE
    return true;
    default: return false;
  }
}

}  // namespace graft::interpreter
