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
#include <string>

#include "ir/dtype.h"
#include "ir/shape_rules/rule.h"

namespace graft::ir {

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

}  // namespace

OutTypes conv_general_dilated_shape(const RuleCtx& c) {
  const ValueType& lhs = c.input(0);
  const ValueType& rhs = c.input(1);
  if (lhs.dtype != rhs.dtype)
    c.dtype_error(std::string("operand dtypes ") + dtype_name(lhs.dtype) + " and " + dtype_name(rhs.dtype) + " differ");
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

}  // namespace graft::ir
