// CPU kernel of conv_general_dilated: a direct convolution in any layout.
// Each output element (batch, feature, position) sums, over the window's
// positions and its group's input features, lhs at the input position
// (position * stride + window offset * rhs dilation - low padding, taken
// only where it lands on an undilated lhs element: a multiple of the lhs
// dilation inside the input) times the kernel. Outputs of one (batch,
// feature) pair run on one OpenMP thread each, so results do not depend on
// the thread count. A direct loop: correct at every setting, not fast; the
// library kernels of large convolutions are the next step (bench/conv).
#include <algorithm>
#include <array>
#include <complex>
#include <cstdint>

#include "graft/errors.h"
#include "interpreter/kernel.h"
#include "interpreter/kernels/layout.h"

namespace graft::interpreter {
namespace {

constexpr int kMaxSpatial = 3;

template <class T>
void conv_typed(const KernelCall& call) {
  const Shape& ls = call.inputs[0].type->shape;
  const Shape& rs = call.inputs[1].type->shape;
  const Shape& os = call.outputs[0].type->shape;
  const ir::Ints& lspec = ints_attr(call, "lhs_spec");
  const ir::Ints& rspec = ints_attr(call, "rhs_spec");
  const ir::Ints& ospec = ints_attr(call, "out_spec");
  const ir::Ints& strides = ints_attr(call, "window_strides");
  const ir::Ints& pad_lo = ints_attr(call, "padding_low");
  const ir::Ints& lhs_dilation = ints_attr(call, "lhs_dilation");
  const ir::Ints& rhs_dilation = ints_attr(call, "rhs_dilation");
  const int64_t groups = int_attr(call, "feature_group_count"), batch_groups = int_attr(call, "batch_group_count");
  const int n = static_cast<int>(ls.size()) - 2;
  const std::vector<int64_t> lst = row_major_strides(ls), rst = row_major_strides(rs), ost = row_major_strides(os);
  const int64_t out_batch = os[ospec[0]], out_features = os[ospec[1]], in_per_group = rs[rspec[1]];
  const int64_t per_feature_group = out_features / groups, per_batch_group = out_features / batch_groups;
  // Per spatial dimension: input size, window size, output size, and the strides.
  std::array<int64_t, kMaxSpatial> in{}, window{}, out{}, l_step{}, r_step{}, o_step{};
  int64_t positions = 1, window_size = 1;
  for (int d = 0; d < n; ++d) {
    in[d] = ls[lspec[2 + d]], window[d] = rs[rspec[2 + d]], out[d] = os[ospec[2 + d]];
    l_step[d] = lst[lspec[2 + d]], r_step[d] = rst[rspec[2 + d]], o_step[d] = ost[ospec[2 + d]];
    positions *= out[d];
    window_size *= window[d];
  }
  const T* lhs = static_cast<const T*>(call.inputs[0].data);
  const T* rhs = static_cast<const T*>(call.inputs[1].data);
  T* y = static_cast<T*>(call.outputs[0].data);
  const int64_t pairs = out_batch * out_features;
  if (pairs * positions == 0) return;
#pragma omp parallel for schedule(dynamic) if (pairs * positions * window_size * in_per_group >= (int64_t{1} << 16))
  for (int64_t pair = 0; pair < pairs; ++pair) {
    const int64_t b = pair / out_features, o = pair % out_features;
    const int64_t first_in = (o / per_feature_group) * in_per_group;
    const int64_t in_batch = (o / per_batch_group) * out_batch + b;
    const T* lhs_b = lhs + in_batch * lst[lspec[0]] + first_in * lst[lspec[1]];
    const T* rhs_o = rhs + o * rst[rspec[0]];
    const int64_t l_feature = lst[lspec[1]], r_feature = rst[rspec[1]];
    T* y_bo = y + b * ost[ospec[0]] + o * ost[ospec[1]];
    std::array<int64_t, kMaxSpatial> p{};  // the output position
    for (int64_t pi = 0; pi < positions; ++pi) {
      T acc = T(0);
      std::array<int64_t, kMaxSpatial> w{};  // the window offset
      for (int64_t wi = 0; wi < window_size; ++wi) {
        int64_t l_off = 0, r_off = 0;
        bool inside = true;
        for (int d = 0; d < n && inside; ++d) {
          const int64_t at = p[d] * strides[d] + w[d] * rhs_dilation[d] - pad_lo[d];
          if (at < 0 || at % lhs_dilation[d] != 0 || at / lhs_dilation[d] >= in[d]) inside = false;
          l_off += (at / std::max<int64_t>(lhs_dilation[d], 1)) * l_step[d];
          r_off += w[d] * r_step[d];
        }
        if (inside)
          for (int64_t i = 0; i < in_per_group; ++i) acc += lhs_b[l_off + i * l_feature] * rhs_o[r_off + i * r_feature];
        for (int d = n - 1; d >= 0; --d) {  // next window offset, last dimension fastest
          if (++w[d] < window[d]) break;
          w[d] = 0;
        }
      }
      int64_t y_off = 0;
      for (int d = 0; d < n; ++d) y_off += p[d] * o_step[d];
      y_bo[y_off] = acc;
      for (int d = n - 1; d >= 0; --d) {
        if (++p[d] < out[d]) break;
        p[d] = 0;
      }
    }
  }
}

}  // namespace

void conv_general_dilated_kernel(const KernelCall& call) {
  switch (call.inputs[0].type->dtype) {
    case DType::f32: return conv_typed<float>(call);
    case DType::f64: return conv_typed<double>(call);
    case DType::c64: return conv_typed<std::complex<float>>(call);
    case DType::c128: return conv_typed<std::complex<double>>(call);
    default:
      throw UnsupportedError(std::string("conv_general_dilated: no kernel for ") +
                             dtype_name(call.inputs[0].type->dtype));
  }
}

}  // namespace graft::interpreter
