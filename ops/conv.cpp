// The conv op family: each op's shape/dtype rule, JVP, transpose and
// batching rule side by side, op by op in ops.def order (the rules an op
// takes from ops.def's standard columns are not repeated here).
//
// Shape/dtype rule of conv_general_dilated (XLA's, as lax.conv_general_dilated
// documents it): operands of one float or complex dtype and one rank N + 2;
// lhs_spec, rhs_spec and out_spec permutations of 0..N+1 naming (batch,
// feature, spatial...), (out feature, in feature, spatial...) and (batch,
// feature, spatial...); per spatial dimension a stride, low and high padding
// and lhs and rhs dilations. Each output spatial size is
// (dilated padded input - dilated window) / stride + 1 (0 when the window
// does not fit). feature_group_count G splits the input features into G
// groups, each convolved with O / G of the kernels; batch_group_count splits
// the batch likewise (at most one of them above 1).
//
// Transform rules of conv_general_dilated, JAX's (jax/_src/lax/convolution.py):
// the JVP of a bilinear op (conv(lhs', rhs) + conv(lhs, rhs')); the
// transposes, each another convolution (for lhs: the cotangent against the
// spatially reversed kernel with in and out features swapped, strides and lhs
// dilation exchanged; for rhs: lhs against the cotangent, feature and batch
// groups exchanged); batching folds the vmapped axis into the batch axis
// (lhs batched) or the output features (rhs batched), or, both batched, into
// feature (or batch) groups, as JAX's rule.
#include <string>
#include <vector>

#include "graft/errors.h"
#include "ir/attr_access.h"
#include "ir/dtype.h"
#include "ops/rules.h"

namespace graft::ops {

namespace {

// Whether spec is a permutation of 0..rank-1.
bool is_permutation(const Ints& spec, int rank) {
  if (static_cast<int>(spec.size()) != rank) return false;
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t d : spec) {
    if (d < 0 || d >= rank || seen[static_cast<size_t>(d)]) return false;
    seen[static_cast<size_t>(d)] = true;
  }
  return true;
}

// The attributes of one conv_general_dilated node, to read, change and emit.
struct Conv {
  ir::Ints strides, lo, hi, lhs_dilation, rhs_dilation, lhs_spec, rhs_spec, out_spec;
  int64_t groups = 1, batch_groups = 1;

  explicit Conv(const ir::Node& node)
      : strides(ir::ints_attr(node, "window_strides")),
        lo(ir::ints_attr(node, "padding_low")),
        hi(ir::ints_attr(node, "padding_high")),
        lhs_dilation(ir::ints_attr(node, "lhs_dilation")),
        rhs_dilation(ir::ints_attr(node, "rhs_dilation")),
        lhs_spec(ir::ints_attr(node, "lhs_spec")),
        rhs_spec(ir::ints_attr(node, "rhs_spec")),
        out_spec(ir::ints_attr(node, "out_spec")),
        groups(ir::int_attr(node, "feature_group_count")),
        batch_groups(ir::int_attr(node, "batch_group_count")) {}

  ir::Attrs attrs() const {
    return {{"batch_group_count", batch_groups},
            {"feature_group_count", groups},
            {"lhs_dilation", lhs_dilation},
            {"lhs_spec", lhs_spec},
            {"out_spec", out_spec},
            {"padding_high", hi},
            {"padding_low", lo},
            {"rhs_dilation", rhs_dilation},
            {"rhs_spec", rhs_spec},
            {"window_strides", strides}};
  }
};

// A spec with its first two entries swapped (batch <-> feature, out <-> in features).
ir::Ints swap_first(ir::Ints spec) {
  std::swap(spec[0], spec[1]);
  return spec;
}

// The sizes of x's dimensions `spec[2..]` (its spatial ones).
ir::Ints spatial(const ir::ValueType& t, const ir::Ints& spec) {
  ir::Ints s;
  for (size_t i = 2; i < spec.size(); ++i) s.push_back(t.shape[static_cast<size_t>(spec[i])]);
  return s;
}

int64_t dilated(int64_t size, int64_t dilation) { return size == 0 ? 0 : (size - 1) * dilation + 1; }

// x's axis src moved next to dst (dst counted after src's removal) and merged into it, src major (JAX's
// _reshape_axis_into).
template <class Ctx>
ValueId axis_into(Ctx& c, int64_t src, int64_t dst, ValueId x) {
  const ir::ValueType t = c.type(x);
  ir::Ints perm;
  for (int64_t i = 0; i < t.rank(); ++i)
    if (i != src) perm.push_back(i);
  perm.insert(perm.begin() + dst, src);
  ir::Ints shape;
  for (int64_t i = 0; i < t.rank(); ++i)
    if (i != src) shape.push_back(t.shape[static_cast<size_t>(i)]);
  shape[static_cast<size_t>(dst)] *= t.shape[static_cast<size_t>(src)];
  const ValueId moved = c.add(Op::transpose, {x}, {{"permutation", perm}});
  return c.add(Op::reshape, {moved}, {{"new_sizes", shape}});
}

// x's axis src split into (size1, the rest) (JAX's _reshape_axis_out_of).
template <class Ctx>
ValueId axis_out_of(Ctx& c, int64_t src, int64_t size1, ValueId x) {
  const ir::ValueType t = c.type(x);
  ir::Ints shape(t.shape.begin(), t.shape.end());
  const int64_t size2 = shape[static_cast<size_t>(src)] / size1;
  shape[static_cast<size_t>(src)] = size2;
  shape.insert(shape.begin() + src, size1);
  return c.add(Op::reshape, {x}, {{"new_sizes", shape}});
}

// The cotangent of lhs given the cotangent g of the output (JAX's _conv_general_dilated_transpose_lhs).
ValueId transpose_lhs(JvpCtx& c, const Conv& p, ValueId g, ValueId rhs, const ir::ValueType& lhs_t) {
  const ir::ValueType rhs_t = c.type(rhs), g_t = c.type(g);
  Conv t = p;
  int64_t groups = p.groups;
  if (p.groups > 1) {
    rhs = axis_out_of(c, p.rhs_spec[0], p.groups, rhs);
    rhs = axis_into(c, p.rhs_spec[0], p.rhs_spec[1], rhs);
  } else if (p.batch_groups > 1) {
    rhs = axis_out_of(c, p.rhs_spec[0], p.batch_groups, rhs);
    rhs = axis_into(c, p.rhs_spec[0], p.rhs_spec[1], rhs);
    groups = p.batch_groups;
  }
  const ir::Ints in = spatial(lhs_t, p.lhs_spec), window = spatial(rhs_t, p.rhs_spec), out = spatial(g_t, p.out_spec);
  for (size_t i = 0; i < in.size(); ++i) {
    const int64_t before = dilated(window[i], p.rhs_dilation[i]) - p.lo[i] - 1;
    t.lo[i] = before;
    t.hi[i] = dilated(in[i], p.lhs_dilation[i]) + dilated(window[i], p.rhs_dilation[i]) - 1 -
              dilated(out[i], p.strides[i]) - before;
  }
  t.strides = p.lhs_dilation;
  t.lhs_dilation = p.strides;
  t.lhs_spec = p.out_spec;
  t.rhs_spec = swap_first(p.rhs_spec);
  t.out_spec = p.lhs_spec;
  t.groups = groups;
  t.batch_groups = 1;
  ir::Ints reversed(p.rhs_spec.begin() + 2, p.rhs_spec.end());
  const ValueId flipped = c.add(Op::rev, {rhs}, {{"dimensions", reversed}});
  ValueId result = c.add(Op::conv_general_dilated, {g, flipped}, t.attrs());
  if (p.batch_groups > 1) {
    result = axis_out_of(c, p.lhs_spec[1], p.batch_groups, result);
    result = axis_into(c, p.lhs_spec[1], p.lhs_spec[0], result);
  }
  return result;
}

// The cotangent of rhs given g (JAX's _conv_general_dilated_transpose_rhs).
ValueId transpose_rhs(JvpCtx& c, const Conv& p, ValueId g, ValueId lhs, const ir::ValueType& rhs_t) {
  const ir::ValueType lhs_t = c.type(lhs), g_t = c.type(g);
  Conv t = p;
  if (p.batch_groups > 1) {
    t.groups = p.batch_groups;
    t.batch_groups = 1;
  } else if (p.groups > 1) {
    t.batch_groups = p.groups;
    t.groups = 1;
  }
  const ir::Ints in = spatial(lhs_t, p.lhs_spec), window = spatial(rhs_t, p.rhs_spec), out = spatial(g_t, p.out_spec);
  for (size_t i = 0; i < in.size(); ++i)
    t.hi[i] = dilated(out[i], p.strides[i]) - dilated(in[i], p.lhs_dilation[i]) +
              (dilated(window[i], p.rhs_dilation[i]) - p.lo[i] - 1);
  t.strides = p.rhs_dilation;
  t.rhs_dilation = p.strides;
  t.lhs_spec = swap_first(p.lhs_spec);
  t.rhs_spec = swap_first(p.out_spec);
  t.out_spec = swap_first(p.rhs_spec);
  return c.add(Op::conv_general_dilated, {lhs, g}, t.attrs());
}

}  // namespace

// ---- conv_general_dilated

OutTypes conv_general_dilated_shape(const RuleCtx& c) {
  const ValueType& lhs = c.input(0);
  const ValueType& rhs = c.input(1);
  c.check_same_dtype(lhs, rhs);
  check_accepted_dtype(c, lhs.dtype);
  const int rank = lhs.rank();
  if (rank < 3 || rank > 5)
    c.shape_error("lhs must have rank 3 to 5 (1 to 3 spatial dimensions), got " + type_str(lhs));
  if (rhs.rank() != rank) c.shape_error("rhs " + type_str(rhs) + " must have lhs's rank " + std::to_string(rank));
  const Ints &ls = c.attr_ints("lhs_spec"), &rs = c.attr_ints("rhs_spec"), &os = c.attr_ints("out_spec");
  for (const auto& [name, spec] :
       {std::pair<const char*, const Ints*>{"lhs_spec", &ls}, {"rhs_spec", &rs}, {"out_spec", &os}})
    if (!is_permutation(*spec, rank))
      c.shape_error(std::string(name) + " must be a permutation of the " + std::to_string(rank) + " dimensions");
  const size_t n = static_cast<size_t>(rank - 2);
  const Ints &strides = c.attr_ints("window_strides"), &lo = c.attr_ints("padding_low"),
             &hi = c.attr_ints("padding_high"), &ld = c.attr_ints("lhs_dilation"), &rd = c.attr_ints("rhs_dilation");
  for (const auto& [name, v] : {std::pair<const char*, const Ints*>{"window_strides", &strides},
                                {"padding_low", &lo},
                                {"padding_high", &hi},
                                {"lhs_dilation", &ld},
                                {"rhs_dilation", &rd}})
    if (v->size() != n)
      c.shape_error(std::string(name) + " needs " + std::to_string(n) + " entries (one per spatial dimension), got " +
                    std::to_string(v->size()));
  const int64_t groups = c.attr_int("feature_group_count"), batch_groups = c.attr_int("batch_group_count");
  if (groups < 1 || batch_groups < 1)
    c.shape_error("feature_group_count and batch_group_count must be at least 1, got " + std::to_string(groups) +
                  " and " + std::to_string(batch_groups));
  if (groups > 1 && batch_groups > 1) c.shape_error("feature_group_count and batch_group_count cannot both exceed 1");
  const int64_t batch = lhs.shape[ls[0]], in_features = lhs.shape[ls[1]];
  const int64_t out_features = rhs.shape[rs[0]], kernel_in = rhs.shape[rs[1]];
  if (in_features % groups != 0 || in_features / groups != kernel_in)
    c.shape_error("lhs's " + std::to_string(in_features) + " features over feature_group_count " +
                  std::to_string(groups) + " must equal rhs's input features " + std::to_string(kernel_in));
  if (out_features % groups != 0)
    c.shape_error("rhs's " + std::to_string(out_features) + " output features must divide by feature_group_count " +
                  std::to_string(groups));
  if (batch % batch_groups != 0 || out_features % batch_groups != 0)
    c.shape_error("lhs's batch " + std::to_string(batch) + " and rhs's output features " +
                  std::to_string(out_features) + " must divide by batch_group_count " + std::to_string(batch_groups));
  Shape out(static_cast<size_t>(rank));
  out[static_cast<size_t>(os[0])] = batch / batch_groups;
  out[static_cast<size_t>(os[1])] = out_features;
  for (size_t i = 0; i < n; ++i) {
    if (strides[i] < 1 || ld[i] < 1 || rd[i] < 1)
      c.shape_error("spatial dimension " + std::to_string(i) + ": strides and dilations must be at least 1");
    if (lo[i] < -kMaxDim || lo[i] > kMaxDim || hi[i] < -kMaxDim || hi[i] > kMaxDim)
      c.shape_error("spatial dimension " + std::to_string(i) + ": padding out of range");
    const int64_t in = lhs.shape[ls[2 + i]], window = rhs.shape[rs[2 + i]];
    const int64_t dilated_in = in == 0 ? 0 : (in - 1) * ld[i] + 1;
    const int64_t padded = dilated_in + lo[i] + hi[i];
    if (padded < 0)
      c.shape_error("spatial dimension " + std::to_string(i) + ": padding (" + std::to_string(lo[i]) + ", " +
                    std::to_string(hi[i]) + ") leaves a negative size");
    const int64_t dilated_window = window == 0 ? 0 : (window - 1) * rd[i] + 1;
    out[static_cast<size_t>(os[2 + i])] = padded < dilated_window ? 0 : (padded - dilated_window) / strides[i] + 1;
  }
  c.check_shape(out, "result");
  return {ValueType{lhs.dtype, out}};
}

ir::IdList conv_general_dilated_jvp(JvpCtx& c) {
  const ValueId a =
      c.tangents[0] == kZero ? kZero : c.add(Op::conv_general_dilated, {c.tangents[0], c.primals[1]}, c.attrs());
  const ValueId b =
      c.tangents[1] == kZero ? kZero : c.add(Op::conv_general_dilated, {c.primals[0], c.tangents[1]}, c.attrs());
  return {c.tadd(a, b)};
}

ir::IdList conv_general_dilated_transpose(TransposeCtx& c) {
  if (c.unknown[0] && c.unknown[1])
    throw UnsupportedError("transpose: conv_general_dilated of two tangents is not linear");
  const ValueId g = c.cotangents[0];
  if (g == kZero) return {kZero, kZero};
  const Conv p(c.node());
  if (c.emit().type(g).num_elements() == 0)
    return {c.unknown[0] ? c.zeros(c.operand_types[0]) : kZero, c.unknown[1] ? c.zeros(c.operand_types[1]) : kZero};
  if (c.unknown[0]) return {transpose_lhs(c.emit(), p, g, c.operands[1], c.operand_types[0]), kZero};
  return {kZero, transpose_rhs(c.emit(), p, g, c.operands[0], c.operand_types[1])};
}

// JAX's batching rule (_conv_general_dilated_batch_rule): lhs batched
// folds the axis into lhs's batch (the output's batch; with batch groups,
// inside each group); rhs batched, into rhs's output features (inside each
// group, so groups stay outermost); both batched, into more feature groups
// (or batch groups).
std::vector<BatchedValue> conv_general_dilated_batch(BatchCtx& c) {
  Conv p(c.node());
  const int64_t ld = c.operands[0].dim, rd = c.operands[1].dim, size = c.axis_size;
  ValueId lhs = c.operands[0].value, rhs = c.operands[1].value;
  auto conv = [&](ValueId l, ValueId r) { return c.add(Op::conv_general_dilated, {l, r}, p.attrs()); };
  if (ld != kNotBatched && rd != kNotBatched) {
    if (p.batch_groups > 1) {
      lhs = axis_into(c, ld, p.lhs_spec[0], lhs);
      p.batch_groups *= size;
    } else {
      lhs = axis_into(c, ld, p.lhs_spec[1], lhs);
      p.groups *= size;
    }
    rhs = axis_into(c, rd, p.rhs_spec[0], rhs);
    return {{axis_out_of(c, p.out_spec[1], size, conv(lhs, rhs)), p.out_spec[1]}};
  }
  if (ld != kNotBatched) {
    if (p.batch_groups == 1) {
      lhs = axis_into(c, ld, p.lhs_spec[0], lhs);
    } else {
      lhs = axis_out_of(c, p.lhs_spec[0] + (ld <= p.lhs_spec[0] ? 1 : 0), p.batch_groups, lhs);
      lhs = axis_into(c, ld + (p.lhs_spec[0] < ld ? 1 : 0), p.lhs_spec[0] + 1, lhs);
      lhs = axis_into(c, p.lhs_spec[0], p.lhs_spec[0], lhs);
    }
    return {{axis_out_of(c, p.out_spec[0], size, conv(lhs, rhs)), p.out_spec[0]}};
  }
  if (p.groups == 1 && p.batch_groups == 1) {
    rhs = axis_into(c, rd, p.rhs_spec[0], rhs);
    return {{axis_out_of(c, p.out_spec[1], size, conv(lhs, rhs)), p.out_spec[1]}};
  }
  const int64_t groups = p.groups > 1 ? p.groups : p.batch_groups;
  rhs = axis_out_of(c, p.rhs_spec[0] + (rd <= p.rhs_spec[0] ? 1 : 0), groups, rhs);
  rhs = axis_into(c, rd + (p.rhs_spec[0] < rd ? 1 : 0), p.rhs_spec[0] + 1, rhs);
  rhs = axis_into(c, p.rhs_spec[0], p.rhs_spec[0], rhs);
  ValueId out = axis_out_of(c, p.out_spec[1], groups, conv(lhs, rhs));
  out = axis_out_of(c, p.out_spec[1] + 1, size, out);
  return {{axis_into(c, p.out_spec[1], p.out_spec[1] + 1, out), p.out_spec[1]}};
}

}  // namespace graft::ops
