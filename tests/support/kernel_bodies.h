// Building blocks of the fused bodies the code generator tests emit (CPU
// and CUDA): attributes, one-element constants, and the elementwise ops
// each dtype has.
#pragma once

#include <complex>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include "ir/builder.h"
#include "ir/dtype.h"
#include "ir/literal.h"
#include "ir/op.h"

namespace graft::test {

inline ir::Attrs bcast(Shape shape, ir::Ints dims) {
  return ir::Attrs{{"shape", ir::Ints(shape.begin(), shape.end())}, {"broadcast_dimensions", std::move(dims)}};
}
inline ir::Attrs axes(ir::Ints a) { return ir::Attrs{{"axes", std::move(a)}}; }
inline ir::Attrs to(DType d) { return ir::Attrs{{"new_dtype", d}}; }

// A one-element constant node of value v.
inline ir::ValueId constant(ir::GraphBuilder& b, DType dt, double v) {
  ir::Literal lit{ir::ValueType{dt, {}}, std::vector<uint8_t>(ir::dtype_size(dt))};
  auto put = [&](auto x) { std::memcpy(lit.bytes.data(), &x, sizeof x); };
  switch (dt) {
    case DType::f32: put(static_cast<float>(v)); break;
    case DType::f64: put(v); break;
    case DType::i32: put(static_cast<int32_t>(v)); break;
    case DType::i64: put(static_cast<int64_t>(v)); break;
    case DType::u32: put(static_cast<uint32_t>(v)); break;
    case DType::bool_: put(static_cast<uint8_t>(v != 0)); break;
    case DType::f16: put(float16(static_cast<float>(v)).bits); break;
    case DType::bf16: put(bfloat16(static_cast<float>(v)).bits); break;
    case DType::c64: put(std::complex<float>(static_cast<float>(v), -static_cast<float>(v) / 4)); break;  // v - v/4 i
    default: throw std::logic_error("no case for this dtype here");
  }
  return b.add1(ir::Op::constant, {}, ir::Attrs{{"value", std::make_shared<const ir::Literal>(std::move(lit))}});
}

using ir::Op;
inline const std::vector<Op> kFloatUnary = {
    Op::neg,           Op::abs,      Op::sign,    Op::floor,  Op::ceil,    Op::round,      Op::exp,
    Op::log,           Op::log1p,    Op::expm1,   Op::sqrt,   Op::rsqrt,   Op::sin,        Op::cos,
    Op::tan,           Op::asin,     Op::acos,    Op::atan,   Op::sinh,    Op::cosh,       Op::tanh,
    Op::logistic,      Op::erf,      Op::erf_inv, Op::cbrt,   Op::square,  Op::reciprocal, Op::is_finite,
    Op::stop_gradient, Op::copy,     Op::erfc,    Op::exp2,   Op::log2,    Op::log10,      Op::asinh,
    Op::acosh,         Op::atanh,    Op::trunc,   Op::lgamma, Op::digamma, Op::bessel_i0e, Op::bessel_i1e,
    Op::ndtr,          Op::log_ndtr, Op::ndtri};
inline const std::vector<Op> kFloatBinary = {Op::add,
                                             Op::sub,
                                             Op::mul,
                                             Op::div,
                                             Op::rem,
                                             Op::pow,
                                             Op::max,
                                             Op::min,
                                             Op::atan2,
                                             Op::eq,
                                             Op::ne,
                                             Op::lt,
                                             Op::le,
                                             Op::gt,
                                             Op::ge,
                                             Op::nextafter,
                                             Op::igamma,
                                             Op::igammac,
                                             Op::igamma_grad_a,
                                             Op::random_gamma_grad,
                                             Op::polygamma,
                                             Op::zeta};
inline const std::vector<Op> kIntUnary = {Op::neg, Op::abs, Op::sign, Op::square, Op::reciprocal, Op::bitwise_not, Op::copy,
                                         Op::population_count, Op::clz};
inline const std::vector<Op> kIntBinary = {Op::add, Op::sub, Op::mul, Op::div, Op::rem, Op::max, Op::min, Op::bitwise_and,
                                           Op::bitwise_or, Op::bitwise_xor, Op::shift_left, Op::shift_right_arithmetic,
                                           Op::shift_right_logical, Op::eq, Op::ne, Op::lt, Op::le, Op::gt, Op::ge};

}  // namespace graft::test
