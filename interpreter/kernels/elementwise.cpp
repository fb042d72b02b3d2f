// CPU kernels of the elementwise family. Float math goes through Eigen's
// vectorised array functions; integer division follows XLA (x / 0 = -1,
// x % 0 = x, INT_MIN / -1 = INT_MIN) so no input can trap.
#include <Eigen/Core>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "interpreter/kernels/float_math.h"
#include "interpreter/kernels/loops.h"
#include "interpreter/kernels/wrapping.h"
#include "ir/convert_value.h"

namespace graft::interpreter {
namespace {

using ir::Op;


template <class T>
using CMap = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;
template <class T>
using MMap = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;

// The float math table's function for op, or nullptr (float_math.h).
template <class T>
std::conditional_t<std::is_same_v<T, float>, FloatFnF32, FloatFnF64> float_fn(Op op) {
  const std::optional<FloatFn> fn = float_fn_of(op);
  if (!fn) return nullptr;
  if constexpr (std::is_same_v<T, float>) return float_math().f32[static_cast<int>(*fn)];
  else return float_math().f64[static_cast<int>(*fn)];
}

template <class T>
void unary_float(Op op, const T* x, T* y, int64_t n) {
  if (auto fn = float_fn<T>(op)) {
    parallel_ranges(n, [&](int64_t b, int64_t e) { fn(x + b, y + b, e - b); });
    return;
  }
  parallel_ranges(n, [&](int64_t b, int64_t e) {
    CMap<T> X(x + b, e - b);
    MMap<T> Y(y + b, e - b);
    switch (op) {
      case Op::erf:
        for (int64_t i = b; i < e; ++i) y[i] = std::erf(x[i]);
        break;
      case Op::abs: Y = X.abs(); break;
      case Op::neg: Y = -X; break;
      case Op::sign:
        for (int64_t i = b; i < e; ++i) y[i] = std::isnan(x[i]) ? x[i] : T((x[i] > 0) - (x[i] < 0));
        break;
      case Op::square: Y = X.square(); break;
      case Op::reciprocal: Y = X.inverse(); break;
      default: throw UnsupportedError(std::string(ir::op_name(op)) + ": no float kernel");
    }
  });
}

template <class T>
T int_div(T a, T b) {
  if (b == 0) return static_cast<T>(-1);
  if constexpr (std::is_signed_v<T>)
    if (a == std::numeric_limits<T>::min() && b == -1) return a;
  return a / b;
}

template <class T>
T int_rem(T a, T b) {
  if (b == 0) return a;
  if constexpr (std::is_signed_v<T>)
    if (a == std::numeric_limits<T>::min() && b == -1) return 0;
  return a % b;
}

template <class T>
void unary_int(Op op, const T* x, T* y, int64_t n) {
  if constexpr (std::is_same_v<T, bool>) {  // the shape rules admit only `not` on bool
    if (op != Op::bitwise_not) throw UnsupportedError(std::string(ir::op_name(op)) + ": no bool kernel");
    parallel_ranges(n, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) y[i] = !x[i];
    });
    return;
  } else {
  parallel_ranges(n, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      T v = x[i];
      switch (op) {
        case Op::abs: y[i] = v < 0 ? wrapping_sub<T>(T(0), v) : v; break;  // wraps at INT_MIN, as XLA
        case Op::neg: y[i] = wrapping_sub<T>(T(0), v); break;
        case Op::sign: y[i] = static_cast<T>((v > 0) - (v < 0)); break;
        case Op::square: y[i] = wrapping_mul<T>(v, v); break;
        case Op::reciprocal: y[i] = int_div<T>(1, v); break;
        case Op::bitwise_not: y[i] = static_cast<T>(~v); break;
        default: throw UnsupportedError(std::string(ir::op_name(op)) + ": no integer kernel");
      }
    }
  });
  }
}

void unary_kernel(const KernelCall& call) {
  visit_dtype(call.inputs[0].type->dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in_ptr<T>(call, 0);
    T* y = out_ptr<T>(call, 0);
    if constexpr (std::is_floating_point_v<T>) unary_float<T>(call.op, x, y, out_elements(call));
    else unary_int<T>(call.op, x, y, out_elements(call));
  });
}

// out[i] = f(a[i], b[i]), with the switch outside the loop so it vectorises.
// f is a lambda: a function pointer would be an indirect call per element.
template <class T, class R, class F>
void zip(const KernelCall& call, F f) {
  const T* a = in_ptr<T>(call, 0);
  const T* b = in_ptr<T>(call, 1);
  R* out = out_ptr<R>(call, 0);
  parallel_ranges(out_elements(call), [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) out[i] = f(a[i], b[i]);
  });
}

// Float add, sub, mul and div at the CPU's vector width (float_math.h).
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

template <class T>
void binary_typed(const KernelCall& call) {
  constexpr bool is_float = std::is_floating_point_v<T>;
  if constexpr (is_float)
    if (float_arith<T>(call)) return;
  switch (call.op) {
    case Op::add: return zip<T, T>(call, [](T a, T b) { return wrapping_add<T>(a, b); });
    case Op::sub: return zip<T, T>(call, [](T a, T b) { return wrapping_sub<T>(a, b); });
    case Op::mul: return zip<T, T>(call, [](T a, T b) { return wrapping_mul<T>(a, b); });
    case Op::div:
      if constexpr (is_float) return zip<T, T>(call, [](T a, T b) { return a / b; });
      else return zip<T, T>(call, [](T a, T b) { return int_div<T>(a, b); });
    case Op::rem:
      if constexpr (is_float) return zip<T, T>(call, [](T a, T b) { return std::fmod(a, b); });
      else return zip<T, T>(call, [](T a, T b) { return int_rem<T>(a, b); });
    case Op::pow:
      if constexpr (is_float) return zip<T, T>(call, [](T a, T b) { return std::pow(a, b); });
      break;
    case Op::atan2:
      if constexpr (is_float) return zip<T, T>(call, [](T a, T b) { return std::atan2(a, b); });
      break;
    // max and min propagate NaN, as XLA does.
    case Op::max:
      return zip<T, T>(call, [](T a, T b) {
        if constexpr (is_float) if (std::isnan(a) || std::isnan(b)) return a + b;
        return a > b ? a : b;
      });
    case Op::min:
      return zip<T, T>(call, [](T a, T b) {
        if constexpr (is_float) if (std::isnan(a) || std::isnan(b)) return a + b;
        return a < b ? a : b;
      });
    case Op::bitwise_and:
      if constexpr (!is_float) return zip<T, T>(call, [](T a, T b) { return static_cast<T>(a & b); });
      break;
    case Op::bitwise_or:
      if constexpr (!is_float) return zip<T, T>(call, [](T a, T b) { return static_cast<T>(a | b); });
      break;
    case Op::bitwise_xor:
      if constexpr (!is_float) return zip<T, T>(call, [](T a, T b) { return static_cast<T>(a ^ b); });
      break;
    case Op::eq: return zip<T, bool>(call, [](T a, T b) { return a == b; });
    case Op::ne: return zip<T, bool>(call, [](T a, T b) { return a != b; });
    case Op::lt: return zip<T, bool>(call, [](T a, T b) { return a < b; });
    case Op::le: return zip<T, bool>(call, [](T a, T b) { return a <= b; });
    case Op::gt: return zip<T, bool>(call, [](T a, T b) { return a > b; });
    case Op::ge: return zip<T, bool>(call, [](T a, T b) { return a >= b; });
    default: break;
  }
  throw UnsupportedError(std::string(ir::op_name(call.op)) + ": no kernel for " + dtype_name(call.inputs[0].type->dtype));
}

void binary_kernel(const KernelCall& call) {
  visit_dtype(call.inputs[0].type->dtype, [&](auto tag) { binary_typed<typename decltype(tag)::type>(call); });
}

using ir::convert_value;  // saturating, NaN to 0 (ir/convert_value.h)


}  // namespace

void neg_kernel(const KernelCall& call) { unary_kernel(call); }
void abs_kernel(const KernelCall& call) { unary_kernel(call); }
void sign_kernel(const KernelCall& call) { unary_kernel(call); }
void floor_kernel(const KernelCall& call) { unary_kernel(call); }
void ceil_kernel(const KernelCall& call) { unary_kernel(call); }
void round_kernel(const KernelCall& call) { unary_kernel(call); }
void exp_kernel(const KernelCall& call) { unary_kernel(call); }
void log_kernel(const KernelCall& call) { unary_kernel(call); }
void log1p_kernel(const KernelCall& call) { unary_kernel(call); }
void expm1_kernel(const KernelCall& call) { unary_kernel(call); }
void sqrt_kernel(const KernelCall& call) { unary_kernel(call); }
void rsqrt_kernel(const KernelCall& call) { unary_kernel(call); }
void sin_kernel(const KernelCall& call) { unary_kernel(call); }
void cos_kernel(const KernelCall& call) { unary_kernel(call); }
void tan_kernel(const KernelCall& call) { unary_kernel(call); }
void asin_kernel(const KernelCall& call) { unary_kernel(call); }
void acos_kernel(const KernelCall& call) { unary_kernel(call); }
void atan_kernel(const KernelCall& call) { unary_kernel(call); }
void sinh_kernel(const KernelCall& call) { unary_kernel(call); }
void cosh_kernel(const KernelCall& call) { unary_kernel(call); }
void tanh_kernel(const KernelCall& call) { unary_kernel(call); }
void logistic_kernel(const KernelCall& call) { unary_kernel(call); }
void erf_kernel(const KernelCall& call) { unary_kernel(call); }
void square_kernel(const KernelCall& call) { unary_kernel(call); }
void reciprocal_kernel(const KernelCall& call) { unary_kernel(call); }

void is_finite_kernel(const KernelCall& call) {
  visit_dtype(call.inputs[0].type->dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in_ptr<T>(call, 0);
    bool* y = out_ptr<bool>(call, 0);
    parallel_ranges(out_elements(call), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        if constexpr (std::is_floating_point_v<T>) y[i] = std::isfinite(x[i]);
        else y[i] = true;
      }
    });
  });
}

void bitwise_not_kernel(const KernelCall& call) { unary_kernel(call); }
void stop_gradient_kernel(const KernelCall& call) { copy_kernel(call); }

void copy_kernel(const KernelCall& call) {
  size_t bytes = static_cast<size_t>(out_elements(call)) * ir::dtype_size(call.outputs[0].type->dtype);
  if (bytes) std::memcpy(call.outputs[0].data, call.inputs[0].data, bytes);
}

void add_kernel(const KernelCall& call) { binary_kernel(call); }
void sub_kernel(const KernelCall& call) { binary_kernel(call); }
void mul_kernel(const KernelCall& call) { binary_kernel(call); }
void div_kernel(const KernelCall& call) { binary_kernel(call); }
void rem_kernel(const KernelCall& call) { binary_kernel(call); }
void pow_kernel(const KernelCall& call) { binary_kernel(call); }
void max_kernel(const KernelCall& call) { binary_kernel(call); }
void min_kernel(const KernelCall& call) { binary_kernel(call); }
void atan2_kernel(const KernelCall& call) { binary_kernel(call); }
void bitwise_and_kernel(const KernelCall& call) { binary_kernel(call); }
void bitwise_or_kernel(const KernelCall& call) { binary_kernel(call); }
void bitwise_xor_kernel(const KernelCall& call) { binary_kernel(call); }

void eq_kernel(const KernelCall& call) { binary_kernel(call); }
void ne_kernel(const KernelCall& call) { binary_kernel(call); }
void lt_kernel(const KernelCall& call) { binary_kernel(call); }
void le_kernel(const KernelCall& call) { binary_kernel(call); }
void gt_kernel(const KernelCall& call) { binary_kernel(call); }
void ge_kernel(const KernelCall& call) { binary_kernel(call); }

void select_kernel(const KernelCall& call) {
  const bool* pred = in_ptr<bool>(call, 0);
  bool scalar_pred = call.inputs[0].type->rank() == 0;
  visit_dtype(call.inputs[1].type->dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* on_true = in_ptr<T>(call, 1);
    const T* on_false = in_ptr<T>(call, 2);
    T* out = out_ptr<T>(call, 0);
    parallel_ranges(out_elements(call), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) out[i] = pred[scalar_pred ? 0 : i] ? on_true[i] : on_false[i];
    });
  });
}

void convert_element_type_kernel(const KernelCall& call) {
  visit_dtype(call.inputs[0].type->dtype, [&](auto from_tag) {
    using From = typename decltype(from_tag)::type;
    visit_dtype(call.outputs[0].type->dtype, [&](auto to_tag) {
      using To = typename decltype(to_tag)::type;
      const From* x = in_ptr<From>(call, 0);
      To* y = out_ptr<To>(call, 0);
      parallel_ranges(out_elements(call), [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) y[i] = convert_value<To, From>(x[i]);
      });
    });
  });
}

}  // namespace graft::interpreter
