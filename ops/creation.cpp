// The creation op family: each op's shape/dtype rule, JVP, transpose and
// batching rule side by side, op by op in ops.def order (the rules an op
// takes from ops.def's standard columns are not repeated here).
//
// Shape/dtype rules of values made from attributes alone: iota and constant.
#include "ir/dtype.h"
#include "ops/rules.h"

namespace graft::ops {

// ---- iota

// iota: 0, 1, 2, ... along `dimension` of `shape`, broadcast along the others.
OutTypes iota_shape(const RuleCtx& c) {
  DType d = c.attr_dtype("dtype");
  if (d == DType::bool_) c.dtype_error("iota cannot be bool");
  const Ints& shape = c.attr_ints("shape");
  c.check_shape(shape, "shape");
  c.axis(c.attr_int("dimension"), static_cast<int>(shape.size()), "dimension");
  return {ValueType{d, shape}};
}

// ---- constant

// constant: the literal in `value`; its byte count must match its type.
OutTypes constant_shape(const RuleCtx& c) {
  const Literal& lit = c.attr_literal("value");
  c.check_shape(lit.type.shape, "literal shape");
  int64_t n = checked_num_elements(lit.type.shape);
  size_t size = dtype_size(lit.type.dtype);
  // Compare element counts, not byte counts: n * size may not fit in 64 bits.
  if (lit.bytes.size() % size != 0 || lit.bytes.size() / size != static_cast<uint64_t>(n))
    c.shape_error("literal " + type_str(lit.type) + " needs " + std::to_string(n) + " elements of " +
                  std::to_string(size) + " bytes, has " + std::to_string(lit.bytes.size()) + " bytes");
  return {lit.type};
}

}  // namespace graft::ops
