// f32 convolutions on oneDNN (interpreter/onednn_products.h; AVX-512 CPUs)
// against graft's own kernel (GRAFT_F32_CONV=graft) and an f64 reference of
// the same operands: random layouts, strides, pads, dilations and groups, and
// the gradients ResNet's layers take (strided 1x1 ones keep their leftover
// rows, grouped transposed ones read their kernel through a group stride).
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "graft/graft.h"
#include "interpreter/onednn_products.h"
#include "support/random_conv.h"
#include "support/scoped_env.h"

using namespace graft;

namespace {

// f(x, w) on graft's own f32 kernel.
Array on_graft(const std::function<Array()>& f) {
  const test::ScopedEnv own("GRAFT_F32_CONV", "graft");
  Array out = f();
  (void)out.to_vector<float>();  // computed before the variable is restored
  return out;
}

// Checks got (f32) against the f64 reference r within the sum's rounding
// bound: (terms + 2) f32 units of roundoff times sum |x| |w| (m), and
// returns how many elements differ from `other` (another f32 order).
int check_f32_sum(const Array& got, const Array& other, const std::vector<double>& r, const std::vector<double>& m,
                  int64_t terms) {
  const std::vector<float> g = got.to_vector<float>(), o = other.to_vector<float>();
  REQUIRE(g.size() == r.size());
  REQUIRE(o.size() == r.size());
  int differing = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    const double bound = static_cast<double>(terms + 2) * std::ldexp(1.0, -24) * m[i] + 1e-30;
    CHECK(std::fabs(g[i] - r[i]) <= bound);
    CHECK(std::fabs(o[i] - r[i]) <= bound);
    differing += g[i] != o[i];
  }
  return differing;
}

}  // namespace

TEST_CASE("f32 convolutions: build_info names the path", "[conv][onednn]") {
  const std::string info = build_info();
  CHECK(info.find("f32 convolution: " + interpreter::f32_conv_description()) != std::string::npos);
  const test::ScopedEnv own("GRAFT_F32_CONV", "graft");
  CHECK_FALSE(interpreter::f32_conv_on_onednn());
}

TEST_CASE("f32 convolutions on oneDNN: ResNet's gradients equal graft's kernel and f64", "[conv][onednn]") {
  INFO("f32 convolution: " << interpreter::f32_conv_description());
  const ConvDimensionNumbers nhwc{"NHWC", "HWIO", "NHWC"};
  struct Case {
    const char* name;
    int64_t size, in, out, kernel, stride, groups;
  };
  // Small ResNet-like layers: 3x3 and 1x1, strided (whose gradients crop or keep a leftover row), grouped
  // and depthwise.
  const std::vector<Case> cases = {{"3x3", 12, 16, 24, 3, 1, 1},          {"3x3/2", 13, 16, 32, 3, 2, 1},
                                   {"1x1/2 even", 14, 16, 32, 1, 2, 1},   {"1x1/2 odd", 15, 16, 32, 1, 2, 1},
                                   {"3x3 groups 4", 12, 32, 32, 3, 1, 4}, {"3x3/2 groups 2", 12, 16, 32, 3, 2, 2},
                                   {"depthwise", 12, 32, 32, 3, 1, 32}};
  const auto keys = random::split(random::key(11), 3 * static_cast<int64_t>(cases.size()));
  int differing = 0, at = 0;
  for (const Case& c : cases) {
    INFO(c.name);
    const int64_t batch = 4, out_size = (c.size + c.stride - 1) / c.stride, pad = c.kernel / 2;
    const Array x = random::normal(keys[at++], {batch, c.size, c.size, c.in}, DType::f32);
    const Array w = random::normal(keys[at++], {c.kernel, c.kernel, c.in / c.groups, c.out}, DType::f32);
    const Array g = random::normal(keys[at++], {batch, out_size, out_size, c.out}, DType::f32);
    const Padding padding(std::vector<std::pair<int64_t, int64_t>>{{pad, pad}, {pad, pad}});
    auto conv_of = [&](const Array& a, const Array& b) {
      return conv_general_dilated(a, b, {c.stride, c.stride}, padding, {}, {}, nhwc, c.groups);
    };
    // Forward, data gradient, weight gradient, each with its f64 values and those of |x|, |w|, |g|.
    using Pass = std::function<Array(const Array&, const Array&, const Array&)>;
    const std::vector<std::pair<const char*, Pass>> passes = {
        {"fwd", [&](const Array& a, const Array& b, const Array&) { return conv_of(a, b); }},
        {"dx",
         [&](const Array& a, const Array& b, const Array& ct) {
           return std::get<0>(vjp([&](const Array& v) { return conv_of(v, b); }, a).second(ct));
         }},
        {"dw", [&](const Array& a, const Array& b, const Array& ct) {
           return std::get<0>(vjp([&](const Array& v) { return conv_of(a, v); }, b).second(ct));
         }}};
    for (const auto& [pass, f] : passes) {
      INFO(pass);
      const Array got = jit(f)(x, w, g), own = on_graft([&] { return jit(f)(x, w, g); });
      auto wide = [](const Array& a) { return astype(a, DType::f64); };
      const std::vector<double> r = f(wide(x), wide(w), wide(g)).to_vector<double>();
      const std::vector<double> m = f(abs(wide(x)), abs(wide(w)), abs(wide(g))).to_vector<double>();
      // The longest sum: a weight gradient's over batch and positions, else the window's taps and features.
      const int64_t terms = std::string(pass) == "dw" ? batch * c.size * c.size : c.kernel * c.kernel * c.out;
      differing += check_f32_sum(got, own, r, m, terms);
    }
  }
  // oneDNN ran: it sums in another order than graft's kernel, so some roundings differ.
  if (interpreter::f32_conv_on_onednn()) CHECK(differing > 0);
}

TEST_CASE("f32 convolutions on oneDNN: random layouts, strides, pads, dilations and groups", "[conv][onednn]") {
  INFO("f32 convolution: " << interpreter::f32_conv_description());
  std::mt19937 rng(2027);
  const auto keys = random::split(random::key(12), 2 * 48);
  int64_t checked = 0;
  int differing = 0;
  for (int t = 0; t < 48; ++t) {
    const test::RandomConv c = test::random_conv(rng);
    const Array x = random::normal(keys[2 * t], c.lhs_shape(), DType::f32);
    const Array w = random::normal(keys[2 * t + 1], c.rhs_shape(), DType::f32);
    INFO("case " << t << ": " << c.dn.lhs << "/" << c.dn.rhs << "/" << c.dn.out << ", groups " << c.groups);
    const Array got = c.apply(x, w), own = on_graft([&] { return c.apply(x, w); });
    const Array x64 = astype(x, DType::f64), w64 = astype(w, DType::f64);
    const std::vector<double> r = c.apply(x64, w64).to_vector<double>();
    const std::vector<double> m = c.apply(abs(x64), abs(w64)).to_vector<double>();
    differing += check_f32_sum(got, own, r, m, c.in_per_group * c.taps);
    checked += static_cast<int64_t>(r.size());
  }
  CHECK(checked > 50000);
  if (interpreter::f32_conv_on_onednn()) CHECK(differing > 0);
}
