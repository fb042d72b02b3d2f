// The CUDA C++ emitted for each elementwise op. Integer, comparison, select,
// conversion and the other exact ops are the CPU emitter's C++ expressions
// (codegen/cpu/elementwise.cpp): they are plain C++ over the shared scalar
// helpers, valid in device code. The float functions that the interpreter
// computes with its vectorised math table are here CUDA's math library
// (sinf, expf, ...: correctly rounded or within the ULP bounds of the CUDA
// Programming Guide, so they may differ from the CPU's bits by those bounds;
// docs/CUDA.md lists them). With the emulated driver the same names are the
// host's libm.
#include "codegen/cuda/elementwise.h"

#include "codegen/cpu/elementwise.h"
#include "graft/errors.h"
#include "interpreter/kernels/float_math.h"

namespace graft::codegen::cuda {

using interpreter::FloatFn;
using ir::Op;

namespace {

// The math library function of `fn` for f64 ("exp"); f32 adds the suffix f.
const char* cuda_math_name(FloatFn fn) {
  switch (fn) {
    case FloatFn::floor: return "floor";
    case FloatFn::ceil: return "ceil";
    case FloatFn::round: return "rint";  // half to even, as the interpreter
    case FloatFn::sqrt: return "sqrt";
    case FloatFn::rsqrt: return nullptr;  // 1 / sqrt (rsqrt is not correctly rounded)
    case FloatFn::exp: return "exp";
    case FloatFn::log: return "log";
    case FloatFn::log1p: return "log1p";
    case FloatFn::expm1: return "expm1";
    case FloatFn::sin: return "sin";
    case FloatFn::cos: return "cos";
    case FloatFn::tan: return "tan";
    case FloatFn::asin: return "asin";
    case FloatFn::acos: return "acos";
    case FloatFn::atan: return "atan";
    case FloatFn::sinh: return "sinh";
    case FloatFn::cosh: return "cosh";
    case FloatFn::tanh: return "tanh";
    case FloatFn::logistic: return nullptr;  // 1 / (1 + exp(-x))
    case FloatFn::count: break;
  }
  return nullptr;
}

}  // namespace

void refuse_as_cuda(const UnsupportedError& from_cpu_emitter) {
  std::string why = from_cpu_emitter.what();
  const std::string prefix = "cpu codegen: ";
  if (why.rfind(prefix, 0) == 0) why = why.substr(prefix.size());
  throw UnsupportedError("cuda codegen: " + why);
}

std::string op_expr(Op op, DType dt, DType out, const std::vector<std::string>& a) {
  const std::optional<FloatFn> fn = ir::is_floating(dt) ? interpreter::float_fn_of(op) : std::nullopt;
  if (!fn) {
    try {
      return cpu::detail::op_expr(op, dt, out, a);
    } catch (const UnsupportedError& e) {
      refuse_as_cuda(e);
    }
  }
  const bool f32 = dt == DType::f32;
  const std::string one = f32 ? "1.0f" : "1.0", sfx = f32 ? "f" : "";
  switch (*fn) {
    case FloatFn::rsqrt: return "(" + one + " / sqrt" + sfx + "(" + a[0] + "))";
    case FloatFn::logistic: return "(" + one + " / (" + one + " + exp" + sfx + "(-" + a[0] + ")))";
    default: return std::string(cuda_math_name(*fn)) + sfx + "(" + a[0] + ")";
  }
}

}  // namespace graft::codegen::cuda
