// conv_general_dilated against JAX's values (layouts NCHW, NHWC, NWC and a
// 3-D canonical one; strides, SAME/SAME_LOWER/VALID/explicit and negative
// padding, lhs and rhs dilation, feature groups (grouped and depthwise) and
// batch groups) and its gradients with respect to both operands; vmap
// against a loop in every batched position; jit against eager; check_grads;
// errors that name the shapes.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "conv/jax_conv_values.h"
#include "graft/graft.h"
#include "graft/testing.h"
#include "linalg/linalg_helpers.h"

using namespace graft;
using graft::test::max_abs_diff;

namespace {

// sin(a i + b) over the flat index i, shaped.
Array fill(const Shape& shape, double a, double b) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = std::sin(a * static_cast<double>(i) + b);
  return array<double>(v, shape);
}

struct Case {
  std::string name;
  Shape lhs, rhs;
  std::function<Array(const Array&, const Array&)> conv;
};

std::vector<Case> cases() {
  return {
      {"nchw_same",
       {2, 3, 6, 5},
       {4, 3, 3, 2},
       [](const Array& l, const Array& r) {
         return conv_general_dilated(l, r, {2, 1}, "SAME", {}, {1, 2}, {"NCHW", "OIHW", "NCHW"});
       }},
      {"nhwc_groups",
       {2, 5, 6, 4},
       {3, 3, 2, 6},
       [](const Array& l, const Array& r) {
         return conv_general_dilated(l, r, {1, 1}, Padding({{1, 0}, {2, -1}}), {2, 1}, {}, {"NHWC", "HWIO", "NHWC"}, 2);
       }},
      {"nwc_depthwise",
       {1, 7, 3},
       {3, 1, 3},
       [](const Array& l, const Array& r) {
         return conv_general_dilated(l, r, {2}, "SAME_LOWER", {}, {}, {"NWC", "WIO", "NWC"}, 3);
       }},
      {"ncdhw_valid",
       {1, 2, 4, 3, 3},
       {2, 2, 2, 2, 1},
       [](const Array& l, const Array& r) {
         return conv_general_dilated(l, r, {1, 2, 1}, "VALID");
       }},
      {"batch_groups",
       {4, 2, 5, 5},
       {4, 2, 2, 2},
       [](const Array& l, const Array& r) {
         return conv_general_dilated(l, r, {1, 1}, "VALID", {}, {}, {"NCHW", "OIHW", "NCHW"}, 1, 2);
       }},
  };
}

const std::vector<double>& jax(const std::string& key) { return graft::test::jax_conv_values().at(key); }

// k's output and both gradients (of sum(out * w)) against JAX's values; the output.
Array check_against_jax(const Case& k) {
  const Array lhs = fill(k.lhs, 0.37, 0.1), rhs = fill(k.rhs, 0.53, 0.7);
  const Array out = k.conv(lhs, rhs);
  const std::vector<double>& want = jax(k.name + "/out");
  REQUIRE(static_cast<size_t>(out.size()) == want.size());
  CHECK(max_abs_diff(out, array<double>(want, out.shape())) < 1e-12);
  const Array w = fill(out.shape(), 0.11, 0.3);
  const auto [gl, gr] = grad<0, 1>([&](const Array& l, const Array& r) { return sum(k.conv(l, r) * w); })(lhs, rhs);
  CHECK(max_abs_diff(gl, array<double>(jax(k.name + "/grad_lhs"), lhs.shape())) < 1e-12);
  CHECK(max_abs_diff(gr, array<double>(jax(k.name + "/grad_rhs"), rhs.shape())) < 1e-12);
  return out;
}

}  // namespace

TEST_CASE("conv_general_dilated: values and both gradients are JAX's", "[conv]") {
  for (const Case& k : cases()) {
    INFO(k.name);
    const Array lhs = fill(k.lhs, 0.37, 0.1), rhs = fill(k.rhs, 0.53, 0.7);
    const Array out = check_against_jax(k);
    // f32 within f32's rounding of the same sums.
    const Array out32 = k.conv(astype(lhs, DType::f32), astype(rhs, DType::f32));
    CHECK(out32.dtype() == DType::f32);
    CHECK(max_abs_diff(out32, out) < 1e-5);
    // jit (the CPU backend) runs the same kernel.
    CHECK(max_abs_diff(jit([&](const Array& l, const Array& r) { return k.conv(l, r); },
                           JitOptions{.backend = Backend::cpu})(lhs, rhs),
                       out) == 0);
  }
}

TEST_CASE("conv_transpose: values and both gradients are JAX's", "[conv]") {
  const std::vector<Case> transposed{
      {"t_same_nhwc",
       {2, 4, 3, 3},
       {3, 3, 3, 2},
       [](const Array& l, const Array& r) {
         return conv_transpose(l, r, {2, 2}, "SAME");
       }},
      {"t_valid_dilated",
       {1, 5, 2},
       {3, 2, 4},
       [](const Array& l, const Array& r) { return conv_transpose(l, r, {3}, "VALID", {2}); }},
      {"t_explicit_kernel",
       {1, 3, 4, 4},
       {3, 2, 2, 2},
       [](const Array& l, const Array& r) {
         return conv_transpose(l, r, {2, 1}, Padding({{1, 2}, {0, 1}}), {},
                               ConvDimensionNumbers{"NCHW", "OIHW", "NCHW"}, true);
       }},
  };
  for (const Case& k : transposed) {
    INFO(k.name);
    check_against_jax(k);
  }
  CHECK_THROWS_AS(conv_transpose(fill({1, 4, 3}, 0.1, 0), fill({2, 3, 3}, 0.2, 0), {2}, "SAME_LOWER"), Error);
}

TEST_CASE("conv_general_dilated: derivatives to second order against finite differences", "[conv]") {
  const Array lhs = fill({1, 2, 5, 4}, 0.37, 0.1), rhs = fill({4, 1, 2, 3}, 0.53, 0.7);
  auto f = [](const Array& l, const Array& r) {
    return conv_general_dilated(l, r, {2, 1}, Padding({{1, 1}, {0, 2}}), {1, 2}, {2, 1}, {}, 2);
  };
  CHECK_NOTHROW(testing::check_grads(f, std::make_tuple(lhs, rhs), 2));
}

TEST_CASE("conv_general_dilated: vmap equals a loop, over lhs, rhs or both, with groups", "[conv]") {
  // The first slice of x along axis 0.
  auto item = [](const Array& x, int64_t i) {
    Shape lo(x.shape().size(), 0), hi = x.shape();
    lo[0] = i, hi[0] = i + 1;
    return reshape(slice(x, lo, hi), Shape(x.shape().begin() + 1, x.shape().end()));
  };
  struct Groups {
    int64_t features, batch;
  };
  for (const Groups g : {Groups{1, 1}, Groups{3, 1}, Groups{1, 2}}) {
    INFO("feature groups " << g.features << ", batch groups " << g.batch);
    auto f = [g](const Array& l, const Array& r) {
      return conv_general_dilated(l, r, {1, 2}, "SAME", {}, {}, {"NHWC", "OIHW", "NHWC"}, g.features, g.batch);
    };
    // 3 mapped x NHWC lhs with 4 examples and 6 features; OIHW rhs with 6 outputs.
    const Array lhs = fill({3, 4, 3, 5, 6}, 0.37, 0.1);
    const Array rhs = fill({3, 6, 6 / g.features, 2, 2}, 0.53, 0.7);
    const Array l0 = item(lhs, 0), r0 = item(rhs, 0);
    const Array both = vmap(f)(lhs, rhs);
    const Array over_lhs = vmap([&](const Array& l) { return f(l, r0); })(lhs);
    const Array over_rhs = vmap([&](const Array& r) { return f(l0, r); })(rhs);
    // The mapped axis elsewhere than first: lhs mapped over its H axis (moved back), rhs over its last.
    const Array lhs_h = transpose(lhs, {1, 2, 0, 3, 4}), rhs_w = transpose(rhs, {1, 2, 3, 4, 0});
    const Array inner = vmap([&](const Array& l, const Array& r) { return f(l, r); }, Axes{2, 4})(lhs_h, rhs_w);
    for (int64_t i = 0; i < 3; ++i) {
      CHECK(max_abs_diff(item(both, i), f(item(lhs, i), item(rhs, i))) < 1e-13);
      CHECK(max_abs_diff(item(over_lhs, i), f(item(lhs, i), r0)) < 1e-13);
      CHECK(max_abs_diff(item(over_rhs, i), f(l0, item(rhs, i))) < 1e-13);
      CHECK(max_abs_diff(item(inner, i), f(item(lhs, i), item(rhs, i))) < 1e-13);
    }
  }
}

TEST_CASE("conv_general_dilated: conv's canonical layout, and errors naming the shapes", "[conv]") {
  const Array lhs = fill({2, 3, 5, 5}, 0.37, 0.1), rhs = fill({4, 3, 3, 3}, 0.53, 0.7);
  CHECK(max_abs_diff(conv(lhs, rhs, {1, 1}, "SAME"), conv_general_dilated(lhs, rhs, {1, 1}, "SAME")) == 0);
  CHECK(conv(fill({1, 2, 9}, 0.3, 0.0), fill({5, 2, 4}, 0.2, 0.0), {2}, "VALID").shape() == Shape{1, 5, 3});
  CHECK_THROWS_WITH(conv(lhs, fill({4, 2, 3, 3}, 0.5, 0.0), {1, 1}, "SAME"), Catch::Contains("conv_general_dilated") &&
                                                                                 Catch::Contains("3 features") &&
                                                                                 Catch::Contains("input features 2"));
  CHECK_THROWS_AS(conv_general_dilated(lhs, rhs, {1, 1}, "SAME", {2, 2}), Error);  // string padding with lhs dilation
  CHECK_THROWS_AS(conv_general_dilated(lhs, rhs, {1, 1}, "SAME", {}, {}, {"NCHW", "OIHW", "NCHH"}), ShapeError);
  CHECK_THROWS_AS(conv_general_dilated(lhs, rhs, {1, 1}, "SAME", {}, {}, {"NCHW", "OIXW", "NCHW"}), ShapeError);
  CHECK_THROWS_AS(Padding("FULL"), Error);
}

TEST_CASE("conv_general_dilated: f16 and bf16 compute in f32 and round once, as JAX on CPUs", "[conv]") {
  const Array lhs = fill({2, 6, 5, 3}, 0.37, 0.1), rhs = fill({3, 3, 3, 4}, 0.53, 0.7);
  auto f = [](const Array& l, const Array& r) {
    return conv_general_dilated(l, r, {2, 1}, "SAME", {}, {}, {"NHWC", "HWIO", "NHWC"});
  };
  for (DType half : {DType::bf16, DType::f16}) {
    const Array l = astype(lhs, half), r = astype(rhs, half);
    const Array y = f(l, r);
    CHECK(y.dtype() == half);
    // The same sums in f32, rounded to the half once: bit for bit.
    const Array want = astype(f(astype(l, DType::f32), astype(r, DType::f32)), half);
    CHECK(max_abs_diff(y, want) == 0);
    // preferred_element_type f32 keeps the f32 sums.
    const Array wide = conv_general_dilated(l, r, {2, 1}, "SAME", {}, {}, {"NHWC", "HWIO", "NHWC"}, 1, 1,
                                            DotOptions{.preferred_element_type = DType::f32});
    CHECK(wide.dtype() == DType::f32);
    CHECK(max_abs_diff(wide, f(astype(l, DType::f32), astype(r, DType::f32))) == 0);
    // Gradients in the half too, within its rounding of the f64 ones.
    const Array g = grad([&](const Array& a) { return sum(astype(f(a, r), DType::f32)); })(l);
    CHECK(g.dtype() == half);
    const Array g64 = grad([&](const Array& a) { return sum(f(a, astype(r, DType::f64))); })(astype(l, DType::f64));
    CHECK(max_abs_diff(g, g64) < 0.05);
  }
}

namespace {

// Naive NHWC/HWIO convolution (stride s, padding p each side, feature
// groups), its gradients by direct loops: the reference of the GEMM paths.
struct NaiveConv {
  int64_t n, h, c, k, o, s, p, groups;
  int64_t out() const { return (h + 2 * p - k) / s + 1; }
  // Calls f(x index, w index, y index) for every product of the convolution.
  template <class F>
  void each(F&& f) const {
    const int64_t m = out(), cg = c / groups, og = o / groups;
    for (int64_t b = 0; b < n; ++b)
      for (int64_t y = 0; y < m; ++y)
        for (int64_t x = 0; x < m; ++x)
          for (int64_t oo = 0; oo < o; ++oo)
            for (int64_t ky = 0; ky < k; ++ky)
              for (int64_t kx = 0; kx < k; ++kx) {
                const int64_t iy = y * s + ky - p, ix = x * s + kx - p;
                if (iy < 0 || iy >= h || ix < 0 || ix >= h) continue;
                for (int64_t i = 0; i < cg; ++i) {
                  const int64_t ci = oo / og * cg + i;
                  f(((b * h + iy) * h + ix) * c + ci, ((ky * k + kx) * cg + i) * o + oo,
                    ((b * m + y) * m + x) * o + oo);
                }
              }
  }
};

}  // namespace

TEST_CASE("conv_general_dilated: the GEMM paths at sizes that split the work, against direct loops", "[conv]") {
  for (const NaiveConv& cfg : {NaiveConv{8, 24, 16, 3, 24, 1, 1, 1}, NaiveConv{8, 24, 16, 3, 24, 2, 1, 2},
                               NaiveConv{4, 20, 16, 3, 16, 1, 1, 16}, NaiveConv{2, 9, 6, 2, 4, 3, 0, 1}}) {
    INFO("size " << cfg.h << " stride " << cfg.s << " groups " << cfg.groups);
    const int64_t m = cfg.out();
    const Array x = fill({cfg.n, cfg.h, cfg.h, cfg.c}, 0.37, 0.1);
    const Array w = fill({cfg.k, cfg.k, cfg.c / cfg.groups, cfg.o}, 0.53, 0.7);
    const Array g = fill({cfg.n, m, m, cfg.o}, 0.11, 0.3);
    const std::vector<double> xv = x.to_vector<double>(), wv = w.to_vector<double>(), gv = g.to_vector<double>();
    std::vector<double> y(static_cast<size_t>(g.size())), dx(xv.size()), dw(wv.size());
    cfg.each([&](int64_t xi, int64_t wi, int64_t yi) {
      y[yi] += xv[xi] * wv[wi];
      dx[xi] += gv[yi] * wv[wi];
      dw[wi] += gv[yi] * xv[xi];
    });
    auto f = [&](const Array& a, const Array& b) {
      return conv_general_dilated(a, b, {cfg.s, cfg.s}, Padding({{cfg.p, cfg.p}, {cfg.p, cfg.p}}), {}, {},
                                  {"NHWC", "HWIO", "NHWC"}, cfg.groups);
    };
    CHECK(max_abs_diff(f(x, w), array<double>(y, g.shape())) < 1e-11);
    const auto [gx, gw] = grad<0, 1>([&](const Array& a, const Array& b) { return sum(f(a, b) * g); })(x, w);
    CHECK(max_abs_diff(gx, array<double>(dx, x.shape())) < 1e-11);
    CHECK(max_abs_diff(gw, array<double>(dw, w.shape())) < 1e-10);
    // f32 through the same paths, within f32's rounding.
    const Array y32 = f(astype(x, DType::f32), astype(w, DType::f32));
    CHECK(max_abs_diff(y32, array<double>(y, g.shape())) < 1e-4);
  }
}
