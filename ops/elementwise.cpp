// The elementwise op family: each op's shape/dtype rule, JVP, transpose and
// batching rule side by side, op by op in ops.def order (the rules an op
// takes from ops.def's standard columns are not repeated here).
//
// Shape/dtype rules of the elementwise family: operands of one shape (select's
// predicate may be a scalar), result of that shape. Most ops take the
// standard SAME_TYPE or BOOL_RESULT rule (ops.def's `shape` column).
//
// Transform rules of the elementwise family, each op's rules together. Most
// elementwise ops need none here: ops.def gives their derivative as a
// formula (DERIVATIVE), their JVP as linearity (LINEAR_IN) and their
// batching as the standard elementwise rule (elementwise_batch, at the end of this file).
// Rules are written with graft's own ops, so higher derivatives come free.
//
// Complex numbers. The transposes are JAX's: plain transposes of the
// real-linear maps, no conjugation, so that grad of a real-valued function
// of a complex z gives JAX's answer, the conjugate of df/dz-bar's double.
//
// The special functions: JAX's derivatives. Those JAX does not define
// (in polygamma's order, zeta's s, betainc's a and b, and of igamma_grad_a
// and random_gamma_grad) are refused when asked for, not taken as zero.
#include <algorithm>
#include <cmath>

#include "graft/errors.h"
#include "ir/dtype.h"
#include "ops/rules.h"

namespace graft::ops {

namespace {

using Out = ir::IdList;

// max/min: the tangent of the chosen operand; ties split evenly, as JAX does.
template <Op Compare>
Out minmax_rule(JvpCtx& c) {
  ValueId a = c.primals[0], b = c.primals[1];
  ValueId ta = c.instantiate(c.tangents[0], a), tb = c.instantiate(c.tangents[1], b);
  ValueId a_wins = c.add(Compare, {a, b});
  ValueId tie = c.add(Op::eq, {a, b});
  ValueId half = c.add(Op::mul, {c.add(Op::add, {ta, tb}), c.scalar_like(0.5, a)});
  return {c.add(Op::select, {tie, half, c.add(Op::select, {a_wins, ta, tb})})};
}

}  // namespace

// ---- neg

ir::IdList neg_transpose(TransposeCtx& c) {
  return {c.cotangents[0] == kZero ? kZero : c.add(Op::neg, {c.cotangents[0]})};
}

namespace {

void check_same(const RuleCtx& c, const ValueType& a, const ValueType& b) {
  if (a.shape != b.shape)
    c.shape_error("operand shapes " + shape_str(a.shape) + " and " + shape_str(b.shape) + " differ");
  c.check_same_dtype(a, b);
}

}  // namespace

// SAME_TYPE: operands of one shape and dtype, which the `dtypes` column accepts.
OutTypes same_type_rule(const RuleCtx& c) {
  for (size_t i = 1; i < c.num_inputs(); ++i) check_same(c, c.input(0), c.input(i));
  check_accepted_dtype(c, c.input(0).dtype);
  return {c.input(0)};
}

// BOOL_RESULT: as SAME_TYPE, with a bool result (comparisons, is_finite).
OutTypes bool_result_rule(const RuleCtx& c) {
  for (size_t i = 1; i < c.num_inputs(); ++i) check_same(c, c.input(0), c.input(i));
  check_accepted_dtype(c, c.input(0).dtype);
  return {ValueType{DType::bool_, c.input(0).shape}};
}

// ---- abs

// abs: SAME_TYPE, but the absolute value of a complex number is real.
OutTypes abs_shape(const RuleCtx& c) {
  check_accepted_dtype(c, c.input(0).dtype);
  return {ValueType{real_dtype(c.input(0).dtype), c.input(0).shape}};
}

// abs: sign(x) * t for real x; real(t * conj(x) / |x|) for complex x
// (JAX's rule; at 0 the divisor is taken as 1, so the tangent is 0 there).
ir::IdList abs_jvp(JvpCtx& c) {
  const ValueId x = c.primals[0], t = c.tangents[0];
  const DType d = c.type(x).dtype;
  if (!ir::is_complex(d)) {
    // JAX's convention at the kink: +1 at ±0 (select(x >= 0, t, -t)), not sign(x)'s 0.
    const ValueId up = c.add(Op::ge, {x, c.scalar_like(0, x)});
    return {c.tmul(t, c.add(Op::select, {up, c.scalar_like(1, x), c.scalar_like(-1, x)}))};
  }
  const ValueId y = c.outputs[0];
  const ValueId zero = c.scalar_like(0, y), one = c.scalar_like(1, y);
  const ValueId safe = c.add(Op::select, {c.add(Op::eq, {y, zero}), one, y});
  const ValueId unit = c.add(Op::div, {c.add(Op::conj, {x}), c.add(Op::complex, {safe, c.scalar_like(0, y)})});
  return {c.add(Op::real, {c.tmul(t, unit)})};
}

// ---- copy

ir::IdList copy_transpose(TransposeCtx& c) { return {c.cotangents[0]}; }

// ---- checkpoint_name

// The tangent passes unnamed (as JAX's name_p): a policy names primal values only.
ir::IdList checkpoint_name_jvp(JvpCtx& c) { return {c.tangents[0]}; }

// ---- add

ir::IdList add_jvp(JvpCtx& c) { return {c.tadd(c.tangents[0], c.tangents[1])}; }

ir::IdList add_transpose(TransposeCtx& c) {
  ValueId ct = c.cotangents[0];
  return {c.unknown[0] ? ct : kZero, c.unknown[1] ? ct : kZero};
}

// ---- sub

ir::IdList sub_jvp(JvpCtx& c) { return {c.tsub(c.tangents[0], c.tangents[1])}; }

ir::IdList sub_transpose(TransposeCtx& c) {
  ValueId ct = c.cotangents[0];
  ValueId neg = (c.unknown[1] && ct != kZero) ? c.add(Op::neg, {ct}) : kZero;
  return {c.unknown[0] ? ct : kZero, c.unknown[1] ? neg : kZero};
}

// ---- mul

ir::IdList mul_jvp(JvpCtx& c) {
  return {c.tadd(c.tmul(c.tangents[0], c.primals[1]), c.tmul(c.tangents[1], c.primals[0]))};
}

// mul is linear in one operand when the other is known.
ir::IdList mul_transpose(TransposeCtx& c) {
  ValueId ct = c.cotangents[0];
  if (c.unknown[0] && c.unknown[1]) throw UnsupportedError("transpose: mul of two tangents is not linear");
  if (ct == kZero) return {kZero, kZero};
  if (c.unknown[0]) return {c.add(Op::mul, {ct, c.operands[1]}), kZero};
  return {kZero, c.add(Op::mul, {c.operands[0], ct})};
}

// ---- div

// d(a/b) = da/b - db*y/b
ir::IdList div_jvp(JvpCtx& c) {
  ValueId a = c.tangents[0] == kZero ? kZero : c.add(Op::div, {c.tangents[0], c.primals[1]});
  ValueId b =
      c.tangents[1] == kZero ? kZero : c.add(Op::div, {c.add(Op::mul, {c.tangents[1], c.outputs[0]}), c.primals[1]});
  return {c.tsub(a, b)};
}

ir::IdList div_transpose(TransposeCtx& c) {
  if (c.unknown[1]) throw UnsupportedError("transpose: div is linear only in its numerator");
  ValueId ct = c.cotangents[0];
  return {ct == kZero ? kZero : c.add(Op::div, {ct, c.operands[1]}), kZero};
}

// ---- rem

// rem(a, b) = a - b * trunc(a / b): da - db * trunc(a/b)
ir::IdList rem_jvp(JvpCtx& c) {
  ValueId q = kZero;
  if (c.tangents[1] != kZero) {
    ValueId ratio = c.add(Op::div, {c.primals[0], c.primals[1]});
    ValueId trunc = c.add(Op::mul, {c.add(Op::sign, {ratio}), c.add(Op::floor, {c.add(Op::abs, {ratio})})});
    q = c.tmul(c.tangents[1], trunc);
  }
  return {c.tsub(c.tangents[0], q)};
}

// ---- pow

// pow(a, b): da * b * a^(b-1) + db * log(a) * y, with log taken of 1 where a == 0
// so that 0^b contributes no NaN when b carries no tangent (as JAX does).
ir::IdList pow_jvp(JvpCtx& c) {
  ValueId a = c.primals[0], b = c.primals[1], y = c.outputs[0];
  ValueId da = kZero, db = kZero;
  if (c.tangents[0] != kZero) {
    ValueId bm1 = c.add(Op::sub, {b, c.scalar_like(1, b)});
    da = c.tmul(c.tangents[0], c.add(Op::mul, {b, c.add(Op::pow, {a, bm1})}));
  }
  if (c.tangents[1] != kZero) {
    ValueId is_zero = c.add(Op::eq, {a, c.zeros_like(a)});
    ValueId safe = c.add(Op::select, {is_zero, c.scalar_like(1, a), a});
    db = c.tmul(c.tangents[1], c.add(Op::mul, {c.add(Op::log, {safe}), y}));
  }
  return {c.tadd(da, db)};
}

// ---- max

ir::IdList max_jvp(JvpCtx& c) { return minmax_rule<Op::gt>(c); }

// ---- min

ir::IdList min_jvp(JvpCtx& c) { return minmax_rule<Op::lt>(c); }

// ---- atan2

// atan2(a, b): (b da - a db) / (a^2 + b^2)
ir::IdList atan2_jvp(JvpCtx& c) {
  ValueId a = c.primals[0], b = c.primals[1];
  ValueId denom = c.add(Op::add, {c.add(Op::square, {a}), c.add(Op::square, {b})});
  ValueId num = c.tsub(c.tmul(c.tangents[0], b), c.tmul(c.tangents[1], a));
  return {num == kZero ? kZero : c.add(Op::div, {num, denom})};
}

namespace {

[[noreturn]] void no_derivative(JvpCtx& c, const std::string& what) {
  throw UnsupportedError(std::string(ir::op_name(c.node().op)) + ": no derivative " + what + " (JAX defines none)");
}

// exp(-x + (a - 1) log x - lgamma(a)), dP(a, x)/dx
ValueId igamma_dx(JvpCtx& c, ValueId a, ValueId x) {
  ValueId am1 = c.add(Op::sub, {a, c.scalar_like(1, a)});
  ValueId e = c.add(Op::sub, {c.add(Op::mul, {am1, c.add(Op::log, {x})}), x});
  return c.add(Op::exp, {c.add(Op::sub, {e, c.add(Op::lgamma, {a})})});
}

// dP/da da + dP/dx dx; igammac's is its negation.
ValueId igamma_tangent(JvpCtx& c) {
  ValueId a = c.primals[0], x = c.primals[1];
  ValueId da = c.tangents[0] == kZero ? kZero : c.tmul(c.tangents[0], c.add(Op::igamma_grad_a, {a, x}));
  ValueId dx = c.tangents[1] == kZero ? kZero : c.tmul(c.tangents[1], igamma_dx(c, a, x));
  return c.tadd(da, dx);
}

}  // namespace

// ---- digamma

// digamma: polygamma(1, x)
ir::IdList digamma_jvp(JvpCtx& c) {
  ValueId x = c.primals[0];
  return {c.tmul(c.tangents[0], c.add(Op::polygamma, {c.scalar_like(1, x), x}))};
}

// ---- bessel_i1e

// bessel_i1e: i0e(x) - y (sign(x) + 1/x), 1/2 at |x| <= eps (where x
// is replaced by eps, so that no branch divides by zero)
ir::IdList bessel_i1e_jvp(JvpCtx& c) {
  ValueId x = c.primals[0], y = c.outputs[0];
  const double eps = c.type(x).dtype == DType::f32 ? 1.1920928955078125e-7 : 2.220446049250313e-16;
  ValueId tiny = c.add(Op::le, {c.add(Op::abs, {x}), c.scalar_like(eps, x)});
  ValueId safe = c.add(Op::select, {tiny, c.scalar_like(eps, x), x});
  ValueId slope =
      c.add(Op::sub, {c.add(Op::bessel_i0e, {safe}),
                      c.add(Op::mul, {y, c.add(Op::add, {c.add(Op::sign, {safe}), c.add(Op::reciprocal, {safe})})})});
  return {c.tmul(c.tangents[0], c.add(Op::select, {tiny, c.scalar_like(0.5, x), slope}))};
}

// ---- igamma

ir::IdList igamma_jvp(JvpCtx& c) { return {igamma_tangent(c)}; }

// ---- igammac

ir::IdList igammac_jvp(JvpCtx& c) { return {c.tneg(igamma_tangent(c))}; }

// ---- igamma_grad_a

ir::IdList igamma_grad_a_jvp(JvpCtx& c) { no_derivative(c, "of its own"); }

// ---- random_gamma_grad

ir::IdList random_gamma_grad_jvp(JvpCtx& c) { no_derivative(c, "of its own"); }

// ---- polygamma

// polygamma(n, x): polygamma(n + 1, x) in x
ir::IdList polygamma_jvp(JvpCtx& c) {
  if (c.tangents[0] != kZero) no_derivative(c, "in its order n");
  ValueId n = c.primals[0], x = c.primals[1];
  return {c.tmul(c.tangents[1], c.add(Op::polygamma, {c.add(Op::add, {n, c.scalar_like(1, n)}), x}))};
}

// ---- zeta

// zeta(s, q): -s zeta(s + 1, q) in q
ir::IdList zeta_jvp(JvpCtx& c) {
  if (c.tangents[0] != kZero) no_derivative(c, "in s");
  ValueId s = c.primals[0], q = c.primals[1];
  ValueId next = c.add(Op::zeta, {c.add(Op::add, {s, c.scalar_like(1, s)}), q});
  return {c.tmul(c.tangents[1], c.add(Op::neg, {c.add(Op::mul, {s, next})}))};
}

// ---- betainc

// betainc(a, b, x): x^(a-1) (1-x)^(b-1) / B(a, b) in x
ir::IdList betainc_jvp(JvpCtx& c) {
  if (c.tangents[0] != kZero || c.tangents[1] != kZero) no_derivative(c, "in a or b");
  ValueId a = c.primals[0], b = c.primals[1], x = c.primals[2];
  ValueId one = c.scalar_like(1, a);
  ValueId lbeta = c.add(Op::sub, {c.add(Op::add, {c.add(Op::lgamma, {a}), c.add(Op::lgamma, {b})}),
                                  c.add(Op::lgamma, {c.add(Op::add, {a, b})})});
  ValueId log_density =
      c.add(Op::add, {c.add(Op::mul, {c.add(Op::sub, {b, one}), c.add(Op::log1p, {c.add(Op::neg, {x})})}),
                      c.add(Op::mul, {c.add(Op::sub, {a, one}), c.add(Op::log, {x})})});
  return {c.tmul(c.tangents[2], c.add(Op::exp, {c.add(Op::sub, {log_density, lbeta})}))};
}

// ---- select

OutTypes select_shape(const RuleCtx& c) {
  const ValueType& pred = c.input(0);
  if (pred.dtype != DType::bool_) c.dtype_error(std::string("predicate must be bool, got ") + dtype_name(pred.dtype));
  check_same(c, c.input(1), c.input(2));
  if (pred.rank() != 0 && pred.shape != c.input(1).shape)
    c.shape_error("predicate shape " + shape_str(pred.shape) + " must be scalar or the branches' shape " +
                  shape_str(c.input(1).shape));
  return {c.input(1)};
}

ir::IdList select_jvp(JvpCtx& c) {
  if (c.tangents[1] == kZero && c.tangents[2] == kZero) return {kZero};
  return {c.add(Op::select, {c.primals[0], c.instantiate(c.tangents[1], c.primals[1]),
                             c.instantiate(c.tangents[2], c.primals[2])})};
}

ir::IdList select_transpose(TransposeCtx& c) {
  if (c.unknown[0]) throw UnsupportedError("transpose: select's predicate cannot carry a tangent");
  ValueId ct = c.cotangents[0];
  if (ct == kZero) return {kZero, kZero, kZero};
  ValueId zero = c.zeros(c.operand_types[1]);
  ValueId p = c.operands[0];
  return {kZero, c.unknown[1] ? c.add(Op::select, {p, ct, zero}) : kZero,
          c.unknown[2] ? c.add(Op::select, {p, zero, ct}) : kZero};
}

// ---- complex

// complex(re, im): parts of one shape and of f32 or f64 (as lax.complex), a c64 or c128 result.
OutTypes complex_shape(const RuleCtx& c) {
  check_same(c, c.input(0), c.input(1));
  const DType d = c.input(0).dtype;
  if (d != DType::f32 && d != DType::f64) c.dtype_error(std::string("needs f32 or f64 parts, got ") + dtype_name(d));
  return {ValueType{complex_dtype(d), c.input(0).shape}};
}

// complex(x, y) = x + iy: ct -> (real(ct), imag(-ct)).
ir::IdList complex_transpose(TransposeCtx& c) {
  ValueId ct = c.cotangents[0];
  if (ct == kZero) return {kZero, kZero};
  return {c.unknown[0] ? c.add(Op::real, {ct}) : kZero, c.unknown[1] ? c.add(Op::imag, {c.add(Op::neg, {ct})}) : kZero};
}

// ---- real

// real(z) and imag(z): a part of each complex element, f32 of c64, f64 of c128.
OutTypes real_shape(const RuleCtx& c) {
  check_accepted_dtype(c, c.input(0).dtype);
  return {ValueType{real_dtype(c.input(0).dtype), c.input(0).shape}};
}

// real(z): ct -> complex(ct, 0).
ir::IdList real_transpose(TransposeCtx& c) {
  ValueId ct = c.cotangents[0];
  if (ct == kZero) return {kZero};
  const ir::ValueType part{ir::real_dtype(c.operand_types[0].dtype), c.operand_types[0].shape};
  return {c.add(Op::complex, {ct, c.zeros(part)})};
}

// ---- imag

OutTypes imag_shape(const RuleCtx& c) { return real_shape(c); }

// imag(z): ct -> complex(0, -ct).
ir::IdList imag_transpose(TransposeCtx& c) {
  ValueId ct = c.cotangents[0];
  if (ct == kZero) return {kZero};
  const ir::ValueType part{ir::real_dtype(c.operand_types[0].dtype), c.operand_types[0].shape};
  return {c.add(Op::complex, {c.zeros(part), c.add(Op::neg, {ct})})};
}

// ---- conj

ir::IdList conj_transpose(TransposeCtx& c) {
  ValueId ct = c.cotangents[0];
  return {ct == kZero ? kZero : c.add(Op::conj, {ct})};
}

// ---- convert_element_type

OutTypes convert_element_type_shape(const RuleCtx& c) {
  return {ValueType{c.attr_dtype("new_dtype"), c.input(0).shape}};
}

ir::IdList convert_element_type_jvp(JvpCtx& c) {
  bool float_in = ir::is_inexact(c.type(c.primals[0]).dtype);
  bool float_out = ir::is_inexact(c.type(c.outputs[0]).dtype);
  if (!float_in || !float_out) return {kZero};
  return {c.linear({0})};
}

ir::IdList convert_element_type_transpose(TransposeCtx& c) {
  ValueId ct = c.cotangents[0];
  if (ct == kZero) return {kZero};
  return {c.add(Op::convert_element_type, {ct}, {{"new_dtype", c.operand_types[0].dtype}})};
}

// ---- bitcast_convert_type

// The bits of each element read as new_dtype (lax.bitcast_convert_type): a
// dtype of the same width, so the op stays elementwise. graft::bitcast
// views across widths with this op, shifts and a reshape (api/ops_elementwise.cpp).
OutTypes bitcast_convert_type_shape(const RuleCtx& c) {
  const DType from = c.input(0).dtype, to = c.attr_dtype("new_dtype");
  if (from == DType::bool_ || to == DType::bool_)
    c.dtype_error(std::string("cannot reinterpret ") + dtype_name(from) + " as " + dtype_name(to) +
                  ": bool has no bit layout");
  if (dtype_size(from) != dtype_size(to))
    c.dtype_error(std::string("cannot reinterpret ") + dtype_name(from) + " (" + std::to_string(dtype_size(from)) +
                  " bytes) as " + dtype_name(to) + " (" + std::to_string(dtype_size(to)) +
                  " bytes): only dtypes of one width (graft::bitcast views across widths)");
  return {ValueType{to, c.input(0).shape}};
}

// Batching: the standard rule, BATCH_ELEMENTWISE
// Operands share one shape, so every operand takes the batch axis where the
// first batched one has it (unbatched operands are broadcast in). select's
// scalar predicate stays a scalar, or, when batched, spans the whole shape.
std::vector<BatchedValue> elementwise_batch(BatchCtx& c) {
  int64_t dim = c.first_batched_dim();
  const bool scalar_pred =
      c.node().op == Op::select && c.unbatched_type(0).rank() == 0 && c.unbatched_type(1).rank() > 0;
  if (scalar_pred && c.operands[0].dim == kNotBatched) {
    dim = c.operands[1].dim != kNotBatched ? c.operands[1].dim : c.operands[2].dim;
  }
  std::vector<ValueId> ins;
  for (size_t i = 0; i < c.operands.size(); ++i) {
    if (i == 0 && scalar_pred) {
      if (c.operands[0].dim == kNotBatched) {
        ins.push_back(c.operands[0].value);
      } else {
        ir::ValueType full = c.unbatched_type(1);
        full.shape.insert(full.shape.begin() + dim, c.axis_size);
        ins.push_back(c.add(Op::broadcast_in_dim, {c.operands[0].value},
                            {{"shape", ir::Ints(full.shape)}, {"broadcast_dimensions", ir::Ints{dim}}}));
      }
      continue;
    }
    ins.push_back(c.at(i, dim));
  }
  return {{c.add(c.node().op, ins, c.attrs()), dim}};
}

}  // namespace graft::ops
