// Transform rules of the elementwise family. JVP rules below; each is the
// derivative written with graft's own ops, so higher derivatives come free.
#include <algorithm>
#include <cmath>

#include "graft/errors.h"
#include "ir/dtype.h"
#include "transforms/rules/batch_rule.h"
#include "transforms/rules/jvp_rule.h"
#include "transforms/rules/transpose_rule.h"

namespace graft::transforms {
namespace {

using ir::Op;
using Out = ir::IdList;

// Tangent of a unary op whose derivative is a function of x and y = f(x).
template <ValueId (*Derivative)(JvpCtx&, ValueId x, ValueId y)>
Out unary(JvpCtx& c) {
  if (c.tangents[0] == kZero) return {kZero};
  return {c.tmul(c.tangents[0], Derivative(c, c.primals[0], c.outputs[0]))};
}

ValueId d_abs(JvpCtx& c, ValueId x, ValueId) { return c.add(Op::sign, {x}); }
ValueId d_exp(JvpCtx&, ValueId, ValueId y) { return y; }
ValueId d_log(JvpCtx& c, ValueId x, ValueId) { return c.add(Op::reciprocal, {x}); }
ValueId d_log1p(JvpCtx& c, ValueId x, ValueId) {
  return c.add(Op::reciprocal, {c.add(Op::add, {x, c.scalar_like(1, x)})});
}
ValueId d_expm1(JvpCtx& c, ValueId, ValueId y) { return c.add(Op::add, {y, c.scalar_like(1, y)}); }
ValueId d_sqrt(JvpCtx& c, ValueId, ValueId y) { return c.add(Op::div, {c.scalar_like(0.5, y), y}); }
ValueId d_rsqrt(JvpCtx& c, ValueId x, ValueId y) {  // -y / (2x)
  return c.add(Op::div, {c.add(Op::mul, {y, c.scalar_like(-0.5, y)}), x});
}
ValueId d_sin(JvpCtx& c, ValueId x, ValueId) { return c.add(Op::cos, {x}); }
ValueId d_cos(JvpCtx& c, ValueId x, ValueId) { return c.add(Op::neg, {c.add(Op::sin, {x})}); }
ValueId d_tan(JvpCtx& c, ValueId, ValueId y) { return c.add(Op::add, {c.scalar_like(1, y), c.add(Op::square, {y})}); }
ValueId one_minus_square(JvpCtx& c, ValueId v) { return c.add(Op::sub, {c.scalar_like(1, v), c.add(Op::square, {v})}); }
ValueId d_asin(JvpCtx& c, ValueId x, ValueId) { return c.add(Op::rsqrt, {one_minus_square(c, x)}); }
ValueId d_acos(JvpCtx& c, ValueId x, ValueId) { return c.add(Op::neg, {c.add(Op::rsqrt, {one_minus_square(c, x)})}); }
ValueId d_atan(JvpCtx& c, ValueId x, ValueId) {
  return c.add(Op::reciprocal, {c.add(Op::add, {c.scalar_like(1, x), c.add(Op::square, {x})})});
}
ValueId d_sinh(JvpCtx& c, ValueId x, ValueId) { return c.add(Op::cosh, {x}); }
ValueId d_cosh(JvpCtx& c, ValueId x, ValueId) { return c.add(Op::sinh, {x}); }
ValueId d_tanh(JvpCtx& c, ValueId, ValueId y) { return one_minus_square(c, y); }
ValueId d_logistic(JvpCtx& c, ValueId, ValueId y) { return c.add(Op::mul, {y, c.add(Op::sub, {c.scalar_like(1, y), y})}); }
ValueId d_erf(JvpCtx& c, ValueId x, ValueId) {  // 2/sqrt(pi) exp(-x^2)
  return c.add(Op::mul, {c.scalar_like(2.0 / std::sqrt(M_PI), x), c.add(Op::exp, {c.add(Op::neg, {c.add(Op::square, {x})})})});
}
ValueId d_square(JvpCtx& c, ValueId x, ValueId) { return c.add(Op::mul, {x, c.scalar_like(2, x)}); }
ValueId d_reciprocal(JvpCtx& c, ValueId, ValueId y) { return c.add(Op::neg, {c.add(Op::square, {y})}); }

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

// ---- JVP rules

ir::IdList neg_jvp(JvpCtx& c) { return {c.tneg(c.tangents[0])}; }
ir::IdList abs_jvp(JvpCtx& c) { return unary<d_abs>(c); }
ir::IdList exp_jvp(JvpCtx& c) { return unary<d_exp>(c); }
ir::IdList log_jvp(JvpCtx& c) { return unary<d_log>(c); }
ir::IdList log1p_jvp(JvpCtx& c) { return unary<d_log1p>(c); }
ir::IdList expm1_jvp(JvpCtx& c) { return unary<d_expm1>(c); }
ir::IdList sqrt_jvp(JvpCtx& c) { return unary<d_sqrt>(c); }
ir::IdList rsqrt_jvp(JvpCtx& c) { return unary<d_rsqrt>(c); }
ir::IdList sin_jvp(JvpCtx& c) { return unary<d_sin>(c); }
ir::IdList cos_jvp(JvpCtx& c) { return unary<d_cos>(c); }
ir::IdList tan_jvp(JvpCtx& c) { return unary<d_tan>(c); }
ir::IdList asin_jvp(JvpCtx& c) { return unary<d_asin>(c); }
ir::IdList acos_jvp(JvpCtx& c) { return unary<d_acos>(c); }
ir::IdList atan_jvp(JvpCtx& c) { return unary<d_atan>(c); }
ir::IdList sinh_jvp(JvpCtx& c) { return unary<d_sinh>(c); }
ir::IdList cosh_jvp(JvpCtx& c) { return unary<d_cosh>(c); }
ir::IdList tanh_jvp(JvpCtx& c) { return unary<d_tanh>(c); }
ir::IdList logistic_jvp(JvpCtx& c) { return unary<d_logistic>(c); }
ir::IdList erf_jvp(JvpCtx& c) { return unary<d_erf>(c); }
ir::IdList square_jvp(JvpCtx& c) { return unary<d_square>(c); }
ir::IdList reciprocal_jvp(JvpCtx& c) { return unary<d_reciprocal>(c); }
ir::IdList copy_jvp(JvpCtx& c) { return {c.linear({0})}; }
ir::IdList add_jvp(JvpCtx& c) { return {c.tadd(c.tangents[0], c.tangents[1])}; }
ir::IdList sub_jvp(JvpCtx& c) { return {c.tsub(c.tangents[0], c.tangents[1])}; }

ir::IdList mul_jvp(JvpCtx& c) {
  return {c.tadd(c.tmul(c.tangents[0], c.primals[1]), c.tmul(c.tangents[1], c.primals[0]))};
}

// d(a/b) = da/b - db*y/b
ir::IdList div_jvp(JvpCtx& c) {
  ValueId a = c.tangents[0] == kZero ? kZero : c.add(Op::div, {c.tangents[0], c.primals[1]});
  ValueId b = c.tangents[1] == kZero ? kZero
                                     : c.add(Op::div, {c.add(Op::mul, {c.tangents[1], c.outputs[0]}), c.primals[1]});
  return {c.tsub(a, b)};
}

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

ir::IdList max_jvp(JvpCtx& c) { return minmax_rule<Op::gt>(c); }
ir::IdList min_jvp(JvpCtx& c) { return minmax_rule<Op::lt>(c); }

// atan2(a, b): (b da - a db) / (a^2 + b^2)
ir::IdList atan2_jvp(JvpCtx& c) {
  ValueId a = c.primals[0], b = c.primals[1];
  ValueId denom = c.add(Op::add, {c.add(Op::square, {a}), c.add(Op::square, {b})});
  ValueId num = c.tsub(c.tmul(c.tangents[0], b), c.tmul(c.tangents[1], a));
  return {num == kZero ? kZero : c.add(Op::div, {num, denom})};
}

ir::IdList select_jvp(JvpCtx& c) {
  if (c.tangents[1] == kZero && c.tangents[2] == kZero) return {kZero};
  return {c.add(Op::select, {c.primals[0], c.instantiate(c.tangents[1], c.primals[1]),
                             c.instantiate(c.tangents[2], c.primals[2])})};
}

ir::IdList convert_element_type_jvp(JvpCtx& c) {
  bool float_in = ir::is_floating(c.type(c.primals[0]).dtype);
  bool float_out = ir::is_floating(c.type(c.outputs[0]).dtype);
  if (!float_in || !float_out) return {kZero};
  return {c.linear({0})};
}


// ---- transpose rules (linear ops only)

ir::IdList neg_transpose(TransposeCtx& c) { return {c.cotangents[0] == kZero ? kZero : c.add(Op::neg, {c.cotangents[0]})}; }
ir::IdList copy_transpose(TransposeCtx& c) { return {c.cotangents[0]}; }

ir::IdList add_transpose(TransposeCtx& c) {
  ValueId ct = c.cotangents[0];
  return {c.unknown[0] ? ct : kZero, c.unknown[1] ? ct : kZero};
}

ir::IdList sub_transpose(TransposeCtx& c) {
  ValueId ct = c.cotangents[0];
  ValueId neg = (c.unknown[1] && ct != kZero) ? c.add(Op::neg, {ct}) : kZero;
  return {c.unknown[0] ? ct : kZero, c.unknown[1] ? neg : kZero};
}

// mul is linear in one operand when the other is known.
ir::IdList mul_transpose(TransposeCtx& c) {
  ValueId ct = c.cotangents[0];
  if (c.unknown[0] && c.unknown[1]) throw UnsupportedError("transpose: mul of two tangents is not linear");
  if (ct == kZero) return {kZero, kZero};
  if (c.unknown[0]) return {c.add(Op::mul, {ct, c.operands[1]}), kZero};
  return {kZero, c.add(Op::mul, {c.operands[0], ct})};
}

ir::IdList div_transpose(TransposeCtx& c) {
  if (c.unknown[1]) throw UnsupportedError("transpose: div is linear only in its numerator");
  ValueId ct = c.cotangents[0];
  return {ct == kZero ? kZero : c.add(Op::div, {ct, c.operands[1]}), kZero};
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

ir::IdList convert_element_type_transpose(TransposeCtx& c) {
  ValueId ct = c.cotangents[0];
  if (ct == kZero) return {kZero};
  return {c.add(Op::convert_element_type, {ct}, {{"new_dtype", c.operand_types[0].dtype}})};
}


// ---- batching rules (vmap)
namespace {

// Operands share one shape, so every operand takes the batch axis where the
// first batched one has it (unbatched operands are broadcast in). select's
// scalar predicate stays a scalar, or, when batched, spans the whole shape.
std::vector<BatchedValue> elementwise_batch(BatchCtx& c) {
  int64_t dim = c.first_batched_dim();
  const bool scalar_pred = c.node().op == Op::select && c.unbatched_type(0).rank() == 0 && c.unbatched_type(1).rank() > 0;
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

}  // namespace

// Every elementwise op batches alike (elementwise_batch).
std::vector<BatchedValue> neg_batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> abs_batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> sign_batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> floor_batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> ceil_batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> round_batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> exp_batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> log_batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> log1p_batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> expm1_batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> sqrt_batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> rsqrt_batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> sin_batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> cos_batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> tan_batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> asin_batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> acos_batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> atan_batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> sinh_batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> cosh_batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> tanh_batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> logistic_batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> erf_batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> square_batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> reciprocal_batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> is_finite_batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> not__batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> stop_gradient_batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> copy_batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> add_batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> sub_batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> mul_batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> div_batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> rem_batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> pow_batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> max_batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> min_batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> atan2_batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> and__batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> or__batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> xor__batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> eq_batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> ne_batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> lt_batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> le_batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> gt_batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> ge_batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> select_batch(BatchCtx& c) { return elementwise_batch(c); }
std::vector<BatchedValue> convert_element_type_batch(BatchCtx& c) { return elementwise_batch(c); }

}  // namespace graft::transforms
