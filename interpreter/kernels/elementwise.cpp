// CPU kernels of the elementwise family. Every op but select and
// convert_element_type is a loop over its scalar function gcg_<ident>
// (scalar_ops.h, the one definition every backend shares): ops.def's
// `kernel` column says SCALAR or VECTOR_MATH, and elementwise_kernel below
// instantiates the loop for each dtype the `dtypes` column accepts. Floats
// of VECTOR_MATH ops go through the vectorised float math table
// (float_math.h) instead, and float add, sub, mul and div through its IEEE
// arithmetic at the CPU's vector width.
#include <cstring>
#include <type_traits>

#include "interpreter/kernels/complex_math.h"
#include "interpreter/kernels/convert.h"
#include "interpreter/kernels/float_math.h"
#include "interpreter/kernels/loops.h"
#include "interpreter/kernels/scalar_ops.h"

namespace graft::interpreter {
namespace {

using ir::Op;

template <class T>
constexpr bool accepts(ir::DTypeClass c) {
  constexpr bool fl = std::is_floating_point_v<T>, b = std::is_same_v<T, bool>;
  switch (c) {
    case ir::DTypeClass::floats:
    case ir::DTypeClass::inexact: return fl;
    case ir::DTypeClass::numbers:
    case ir::DTypeClass::all_numbers: return !b;
    case ir::DTypeClass::signed_numbers: return !b && (fl || std::is_signed_v<T>);
    case ir::DTypeClass::ints: return !fl && !b;
    case ir::DTypeClass::ints_or_bool: return !fl;
    case ir::DTypeClass::complex: return false;
    case ir::DTypeClass::lapack: return std::is_same_v<T, float> || std::is_same_v<T, double>;
    case ir::DTypeClass::real:
    case ir::DTypeClass::any: return true;
  }
  return false;
}

// The float math table's function for op (float_math.h).
template <class T>
auto table_fn(Op op) {
  const int fn = static_cast<int>(*float_fn_of(op));
  if constexpr (std::is_same_v<T, float>) return float_math().f32[fn];
  else return float_math().f64[fn];
}

// Float add, sub, mul and div at the CPU's vector width (float_math.h):
// exact operations, so the same bits as gcg_add ... gcg_div.
template <class T>
bool float_arith(const KernelCall& call) {
  int k;
  switch (call.op) {
    case Op::add: k = static_cast<int>(FloatArith::add); break;
    case Op::sub: k = static_cast<int>(FloatArith::sub); break;
    case Op::mul: k = static_cast<int>(FloatArith::mul); break;
    case Op::div: k = static_cast<int>(FloatArith::div); break;
    default: return false;
  }
  const T* a = in_ptr<T>(call, 0);
  const T* b = in_ptr<T>(call, 1);
  T* out = out_ptr<T>(call, 0);
  auto fn = [&] {
    if constexpr (std::is_same_v<T, float>) return float_math().arith_f32[k];
    else return float_math().arith_f64[k];
  }();
  parallel_ranges(out_elements(call), [&](int64_t lo, int64_t hi) { fn(a + lo, b + lo, out + lo, hi - lo); });
  return true;
}

// The loop of an op on complex operands (complex_math.h).
template <Op op, class T>
void complex_loop(const KernelCall& call) {
  using M = complex_math<op>;
  const int64_t n = out_elements(call);
  const T* x = in_ptr<T>(call, 0);
  if constexpr (ir::op_info(op).arity == 1) {
    using R = decltype(M::apply(T{}));
    R* y = out_ptr<R>(call, 0);
    parallel_ranges(n, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) y[i] = M::apply(x[i]);
    });
  } else {
    using R = decltype(M::apply(T{}, T{}));
    const T* x1 = in_ptr<T>(call, 1);
    R* y = out_ptr<R>(call, 0);
    parallel_ranges(n, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) y[i] = M::apply(x[i], x1[i]);
    });
  }
}

// The storage type of a result computed as R from operands stored as T: a
// half's float results are rounded back to the half on store.
template <class T, class R>
using stored_result = std::conditional_t<ir::is_half_type<T> && std::is_same_v<R, float>, T, R>;

// out[i] = F::apply(x[i], ...), the dtype's loop: the function is a template
// argument, so the loop inlines it and vectorises. Halves compute in float
// (C), as JAX's CPU backend does, and round once per op.
template <Op op, class F>
void elementwise_loop(const KernelCall& call) {
  constexpr ir::OpInfo info = ir::op_info(op);
  ir::visit_element_type(call.inputs[0].type->dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ir::compute_type<T>;
    if constexpr (ir::is_complex_type<T>) {
      if constexpr (complex_math<op>::defined)
        complex_loop<op, T>(call);
      else
        throw UnsupportedError(std::string(info.name) + ": no kernel for " + dtype_name(call.inputs[0].type->dtype));
    } else if constexpr (!accepts<C>(info.dtypes)) {
      throw UnsupportedError(std::string(info.name) + ": no kernel for " + dtype_name(call.inputs[0].type->dtype));
    } else {
      const int64_t n = out_elements(call);
      const T* x = in_ptr<T>(call, 0);
      if constexpr (info.arity == 1) {
        using R = stored_result<T, decltype(F::apply(C{}))>;
        R* y = out_ptr<R>(call, 0);
        if constexpr (info.kernel == ir::KernelKind::vector_math && std::is_floating_point_v<T>) {
          auto fn = table_fn<T>(op);
          parallel_ranges(n, [&](int64_t b, int64_t e) { fn(x + b, y + b, e - b); });
        } else {
          parallel_ranges(n, [&](int64_t b, int64_t e) {
            for (int64_t i = b; i < e; ++i) y[i] = R(F::apply(C(x[i])));
          });
        }
      } else if constexpr (info.arity == 2) {
        if constexpr (std::is_floating_point_v<T>)
          if (float_arith<T>(call)) return;
        using R = stored_result<T, decltype(F::apply(C{}, C{}))>;
        const T* x1 = in_ptr<T>(call, 1);
        R* y = out_ptr<R>(call, 0);
        if constexpr (op == Op::nextafter && ir::is_half_type<T>) {  // a step of the half, not of the float
          constexpr int h = std::is_same_v<T, float16> ? 0 : 1;
          parallel_ranges(n, [&](int64_t b, int64_t e) {
            for (int64_t i = b; i < e; ++i) y[i] = R(gcg_nextafter_half<h>(C(x[i]), C(x1[i])));
          });
          return;
        }
        parallel_ranges(n, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) y[i] = R(F::apply(C(x[i]), C(x1[i])));
        });
      } else {
        static_assert(info.arity == 3);
        using R = stored_result<T, decltype(F::apply(C{}, C{}, C{}))>;
        const T* x1 = in_ptr<T>(call, 1);
        const T* x2 = in_ptr<T>(call, 2);
        R* y = out_ptr<R>(call, 0);
        parallel_ranges(n, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) y[i] = R(F::apply(C(x[i]), C(x1[i]), C(x2[i])));
        });
      }
    }
  });
}

// One functor per SCALAR or VECTOR_MATH op of ops.def, calling gcg_<ident>.
#define GRAFT_SCALAR_FN_OWN(ident)
#define GRAFT_SCALAR_FN_SCALAR(ident)              \
  struct ident##_fn {                              \
    template <class... T>                          \
    static auto apply(T... v) {                    \
      return gcg_##ident(v...);                    \
    }                                              \
  };
#define GRAFT_SCALAR_FN_VECTOR_MATH(ident) GRAFT_SCALAR_FN_SCALAR(ident)
#define GRAFT_OP(ident, name, arity, family, dtypes, shape, jvp, linear, batch, kernel, ...) \
  GRAFT_SCALAR_FN_##kernel(ident)
#include "ir/ops.def"
#undef GRAFT_OP
#undef GRAFT_SCALAR_FN_OWN
#undef GRAFT_SCALAR_FN_SCALAR
#undef GRAFT_SCALAR_FN_VECTOR_MATH

}  // namespace

Kernel elementwise_kernel(Op op) {
  switch (op) {
#define GRAFT_LOOP_OWN(ident)
#define GRAFT_LOOP_SCALAR(ident) \
  case Op::ident: return &elementwise_loop<Op::ident, ident##_fn>;
#define GRAFT_LOOP_VECTOR_MATH(ident) GRAFT_LOOP_SCALAR(ident)
#define GRAFT_OP(ident, name, arity, family, dtypes, shape, jvp, linear, batch, kernel, ...) GRAFT_LOOP_##kernel(ident)
#include "ir/ops.def"
#undef GRAFT_OP
#undef GRAFT_LOOP_OWN
#undef GRAFT_LOOP_SCALAR
#undef GRAFT_LOOP_VECTOR_MATH
    default: return nullptr;
  }
}

void select_kernel(const KernelCall& call) {
  const bool* pred = in_ptr<bool>(call, 0);
  bool scalar_pred = call.inputs[0].type->rank() == 0;
  ir::visit_element_type(call.inputs[1].type->dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* on_true = in_ptr<T>(call, 1);
    const T* on_false = in_ptr<T>(call, 2);
    T* out = out_ptr<T>(call, 0);
    parallel_ranges(out_elements(call), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) out[i] = gcg_select(pred[scalar_pred ? 0 : i], on_true[i], on_false[i]);
    });
  });
}

void convert_element_type_kernel(const KernelCall& call) {
  ir::visit_element_type(call.inputs[0].type->dtype, [&](auto from_tag) {
    using From = typename decltype(from_tag)::type;
    ir::visit_element_type(call.outputs[0].type->dtype, [&](auto to_tag) {
      using To = typename decltype(to_tag)::type;
      const From* x = in_ptr<From>(call, 0);
      To* y = out_ptr<To>(call, 0);
      parallel_ranges(out_elements(call), [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) y[i] = convert_element<To, From>(x[i]);
      });
    });
  });
}

void bitcast_convert_type_kernel(const KernelCall& call) {
  ir::visit_element_type(call.inputs[0].type->dtype, [&](auto from_tag) {
    using From = typename decltype(from_tag)::type;
    ir::visit_element_type(call.outputs[0].type->dtype, [&](auto to_tag) {
      using To = typename decltype(to_tag)::type;
      if constexpr (sizeof(To) != sizeof(From)) {
        throw UnsupportedError("bitcast_convert_type: widths differ");  // the shape rule refused it already
      } else {
        const From* x = in_ptr<From>(call, 0);
        To* y = out_ptr<To>(call, 0);
        parallel_ranges(out_elements(call), [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) std::memcpy(static_cast<void*>(&y[i]), &x[i], sizeof(To));
        });
      }
    });
  });
}

// ---- complex numbers from and to their parts

void complex_kernel(const KernelCall& call) {
  auto run = [&](auto part) {
    using R = decltype(part);
    const R* re = in_ptr<R>(call, 0);
    const R* im = in_ptr<R>(call, 1);
    std::complex<R>* z = out_ptr<std::complex<R>>(call, 0);
    parallel_ranges(out_elements(call), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) z[i] = gcg_c_complex(re[i], im[i]);
    });
  };
  if (call.inputs[0].type->dtype == DType::f64)
    run(0.0);
  else
    run(0.0f);
}

namespace {
// y[i] = f(z[i]) over a complex operand, as c64 or c128.
template <class F>
void over_complex(const KernelCall& call, F f) {
  auto run = [&](auto part) {
    using R = decltype(part);
    const std::complex<R>* z = in_ptr<std::complex<R>>(call, 0);
    using Out = decltype(f(std::complex<R>{}));
    Out* y = out_ptr<Out>(call, 0);
    parallel_ranges(out_elements(call), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) y[i] = f(z[i]);
    });
  };
  if (call.inputs[0].type->dtype == DType::c128)
    run(0.0);
  else
    run(0.0f);
}
}  // namespace

void real_kernel(const KernelCall& call) {
  over_complex(call, [](auto z) { return gcg_c_real(z); });
}
void imag_kernel(const KernelCall& call) {
  over_complex(call, [](auto z) { return gcg_c_imag(z); });
}
void conj_kernel(const KernelCall& call) {
  over_complex(call, [](auto z) { return gcg_c_conj(z); });
}

}  // namespace graft::interpreter
