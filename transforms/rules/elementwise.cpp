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

Out copy_rule(JvpCtx& c) { return {c.linear({0})}; }
Out neg_rule(JvpCtx& c) { return {c.tneg(c.tangents[0])}; }

Out add_rule(JvpCtx& c) { return {c.tadd(c.tangents[0], c.tangents[1])}; }
Out sub_rule(JvpCtx& c) { return {c.tsub(c.tangents[0], c.tangents[1])}; }

Out mul_rule(JvpCtx& c) {
  return {c.tadd(c.tmul(c.tangents[0], c.primals[1]), c.tmul(c.tangents[1], c.primals[0]))};
}

// d(a/b) = da/b - db*y/b
Out div_rule(JvpCtx& c) {
  ValueId a = c.tangents[0] == kZero ? kZero : c.add(Op::div, {c.tangents[0], c.primals[1]});
  ValueId b = c.tangents[1] == kZero ? kZero
                                     : c.add(Op::div, {c.add(Op::mul, {c.tangents[1], c.outputs[0]}), c.primals[1]});
  return {c.tsub(a, b)};
}

// rem(a, b) = a - b * trunc(a / b): da - db * trunc(a/b)
Out rem_rule(JvpCtx& c) {
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
Out pow_rule(JvpCtx& c) {
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

// atan2(a, b): (b da - a db) / (a^2 + b^2)
Out atan2_rule(JvpCtx& c) {
  ValueId a = c.primals[0], b = c.primals[1];
  ValueId denom = c.add(Op::add, {c.add(Op::square, {a}), c.add(Op::square, {b})});
  ValueId num = c.tsub(c.tmul(c.tangents[0], b), c.tmul(c.tangents[1], a));
  return {num == kZero ? kZero : c.add(Op::div, {num, denom})};
}

Out select_rule(JvpCtx& c) {
  if (c.tangents[1] == kZero && c.tangents[2] == kZero) return {kZero};
  return {c.add(Op::select, {c.primals[0], c.instantiate(c.tangents[1], c.primals[1]),
                             c.instantiate(c.tangents[2], c.primals[2])})};
}

Out convert_rule(JvpCtx& c) {
  bool float_in = ir::is_floating(c.type(c.primals[0]).dtype);
  bool float_out = ir::is_floating(c.type(c.outputs[0]).dtype);
  if (!float_in || !float_out) return {kZero};
  return {c.linear({0})};
}

}  // namespace

void register_elementwise_jvp_rules(JvpRuleTable& t) {
  auto set = [&](Op op, JvpRule r) { t[static_cast<size_t>(op)] = r; };
  set(Op::neg, neg_rule);
  set(Op::abs, unary<d_abs>);
  set(Op::exp, unary<d_exp>);
  set(Op::log, unary<d_log>);
  set(Op::log1p, unary<d_log1p>);
  set(Op::expm1, unary<d_expm1>);
  set(Op::sqrt, unary<d_sqrt>);
  set(Op::rsqrt, unary<d_rsqrt>);
  set(Op::sin, unary<d_sin>);
  set(Op::cos, unary<d_cos>);
  set(Op::tan, unary<d_tan>);
  set(Op::asin, unary<d_asin>);
  set(Op::acos, unary<d_acos>);
  set(Op::atan, unary<d_atan>);
  set(Op::sinh, unary<d_sinh>);
  set(Op::cosh, unary<d_cosh>);
  set(Op::tanh, unary<d_tanh>);
  set(Op::logistic, unary<d_logistic>);
  set(Op::erf, unary<d_erf>);
  set(Op::square, unary<d_square>);
  set(Op::reciprocal, unary<d_reciprocal>);
  set(Op::copy, copy_rule);
  set(Op::add, add_rule);
  set(Op::sub, sub_rule);
  set(Op::mul, mul_rule);
  set(Op::div, div_rule);
  set(Op::rem, rem_rule);
  set(Op::pow, pow_rule);
  set(Op::max, minmax_rule<Op::gt>);
  set(Op::min, minmax_rule<Op::lt>);
  set(Op::atan2, atan2_rule);
  set(Op::select, select_rule);
  set(Op::convert_element_type, convert_rule);
}


// ---- transpose rules (linear ops only)
namespace {

using Cts = ir::IdList;

Cts neg_transpose(TransposeCtx& c) { return {c.cotangents[0] == kZero ? kZero : c.add(Op::neg, {c.cotangents[0]})}; }
Cts copy_transpose(TransposeCtx& c) { return {c.cotangents[0]}; }

Cts add_transpose(TransposeCtx& c) {
  ValueId ct = c.cotangents[0];
  return {c.unknown[0] ? ct : kZero, c.unknown[1] ? ct : kZero};
}

Cts sub_transpose(TransposeCtx& c) {
  ValueId ct = c.cotangents[0];
  ValueId neg = (c.unknown[1] && ct != kZero) ? c.add(Op::neg, {ct}) : kZero;
  return {c.unknown[0] ? ct : kZero, c.unknown[1] ? neg : kZero};
}

// mul is linear in one operand when the other is known.
Cts mul_transpose(TransposeCtx& c) {
  ValueId ct = c.cotangents[0];
  if (c.unknown[0] && c.unknown[1]) throw UnsupportedError("transpose: mul of two tangents is not linear");
  if (ct == kZero) return {kZero, kZero};
  if (c.unknown[0]) return {c.add(Op::mul, {ct, c.operands[1]}), kZero};
  return {kZero, c.add(Op::mul, {c.operands[0], ct})};
}

Cts div_transpose(TransposeCtx& c) {
  if (c.unknown[1]) throw UnsupportedError("transpose: div is linear only in its numerator");
  ValueId ct = c.cotangents[0];
  return {ct == kZero ? kZero : c.add(Op::div, {ct, c.operands[1]}), kZero};
}

Cts select_transpose(TransposeCtx& c) {
  if (c.unknown[0]) throw UnsupportedError("transpose: select's predicate cannot carry a tangent");
  ValueId ct = c.cotangents[0];
  if (ct == kZero) return {kZero, kZero, kZero};
  ValueId zero = c.zeros(c.operand_types[1]);
  ValueId p = c.operands[0];
  return {kZero, c.unknown[1] ? c.add(Op::select, {p, ct, zero}) : kZero,
          c.unknown[2] ? c.add(Op::select, {p, zero, ct}) : kZero};
}

Cts convert_transpose(TransposeCtx& c) {
  ValueId ct = c.cotangents[0];
  if (ct == kZero) return {kZero};
  return {c.add(Op::convert_element_type, {ct}, {{"new_dtype", c.operand_types[0].dtype}})};
}

}  // namespace

void register_elementwise_transpose_rules(TransposeRuleTable& t) {
  auto set = [&](Op op, TransposeRule r) { t[static_cast<size_t>(op)] = r; };
  set(Op::neg, neg_transpose);
  set(Op::copy, copy_transpose);
  set(Op::add, add_transpose);
  set(Op::sub, sub_transpose);
  set(Op::mul, mul_transpose);
  set(Op::div, div_transpose);
  set(Op::select, select_transpose);
  set(Op::convert_element_type, convert_transpose);
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

void register_elementwise_batch_rules(BatchRuleTable& t) {
  for (int i = 0; i < ir::kNumOps; ++i)
    if (ir::op_info(static_cast<Op>(i)).family == ir::OpFamily::elementwise) t[static_cast<size_t>(i)] = elementwise_batch;
}

}  // namespace graft::transforms
