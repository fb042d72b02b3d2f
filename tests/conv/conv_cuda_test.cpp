// Convolutions and windowed reductions on CUDA devices (the emulated driver
// under ctest): each a generated kernel, no node on the host. The windowed
// reductions and max pooling's derivatives give the interpreter's bits
// (NaNs, ties and infinities included); the convolution sums in another
// order than the CPU's GEMMs, so it agrees within f32 rounding, its
// gradients too.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "codegen/cuda/driver.h"
#include "codegen/cuda/node_kernels.h"
#include "graft/graft.h"
#include "linalg/linalg_helpers.h"
#include "support/arrays.h"
#include "support/cuda_devices.h"

using namespace graft;
using graft::test::gpus;
using graft::test::max_abs_diff;
using graft::test::randn;

namespace {

void same_bits(const Array& got, const Array& want) {
  REQUIRE(got.shape() == want.shape());
  REQUIRE(got.dtype() == want.dtype());
  const std::vector<float> a = astype(got, DType::f32).to_vector<float>(),
                           b = astype(want, DType::f32).to_vector<float>();
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("element " << i << ": " << a[i] << " and " << b[i]);
    CHECK(std::memcmp(&a[i], &b[i], sizeof(float)) == 0);
  }
}

}  // namespace

TEST_CASE("cuda devices: windowed reductions and max pooling's derivatives are CUDA kernels, bit for bit",
          "[cuda_devices]") {
  const std::vector<Device> g = gpus();
  if (g.empty()) return;
  using P = std::vector<std::pair<int64_t, int64_t>>;
  std::vector<float> v = randn({2, 7, 6, 3}, 21).to_vector<float>();
  v[4] = std::nanf(""), v[9] = v[12] = v[15] = 0.75f, v[30] = std::numeric_limits<float>::infinity(), v[31] = -0.0f;
  const Array x = array(v, {2, 7, 6, 3});
  const Array xi = astype(floor(x * 3.0f), DType::i32);
  const Array w = randn({2, 4, 3, 3}, 22);
  using Fn = std::function<Array(const Array&, const Array&, const Array&)>;
  const std::vector<std::pair<const char*, Fn>> ops = {
      {"max pool SAME",
       [](auto& a, auto&, auto&) {
         return nn::max_pool(a, {3, 3}, {2, 2}, "SAME");
       }},
      {"avg pool",
       [](auto& a, auto&, auto&) {
         return nn::avg_pool(a, {2, 2}, {1, 2});
       }},
      {"min, dilated",
       [](auto& a, auto&, auto&) {
         return reduce_window_min(a, {1, 2, 2, 1}, {}, "VALID", {1, 2, 1, 1}, {1, 1, 2, 1});
       }},
      {"sum of i32, padded",
       [](auto&, auto& n, auto&) {
         return reduce_window_sum(n, {1, 3, 1, 2}, {1, 1, 1, 1}, P{{0, 0}, {1, 1}, {0, 0}, {1, 0}});
       }},
      {"max of i32",
       [](auto&, auto& n, auto&) {
         return reduce_window_max(n, {1, 2, 2, 1}, {1, 2, 2, 1}, "VALID");
       }},
  };
  for (const auto& [name, op] : ops) {
    INFO(name);
    const Array want = op(x, xi, w);
    const codegen::cuda::CudaRunCounts before = codegen::cuda::run_counts();
    const Array got = op(device_put(x, g[0]), device_put(xi, g[0]), device_put(w, g[0]));
    CHECK(codegen::cuda::run_counts().launches > before.launches);
    CHECK(codegen::cuda::run_counts().host_runs == before.host_runs);
    CHECK(got.device() == g[0]);
    same_bits(got, want);
  }
  // Max pooling's gradient (select_and_scatter_add) and min's JVP
  // (select_and_gather_add) under jit(Backend::cuda).
  auto derivatives = [](const Array& a, const Array& c) {
    auto pool = [](const Array& u) { return nn::max_pool(u, {3, 3}, {2, 2}, "SAME"); };
    auto low = [](const Array& u) { return reduce_window_min(u, {1, 2, 2, 1}, {1, 2, 1, 1}, "SAME"); };
    return std::make_tuple(std::get<0>(vjp(pool, a).second(c)),
                           jvp(low, std::make_tuple(a), std::make_tuple(a * 0.5f + 1.0f)).second);
  };
  auto jd = jit(derivatives, JitOptions{.backend = Backend::cuda});
  const Array gx = device_put(x, g[0]), gw = device_put(w, g[0]);
  CHECK_THAT(jd.lower(gx, gw).compile().as_text(), !Catch::Matchers::Contains("runs on the host"));
  const auto [scattered, gathered] = jd(gx, gw);
  const auto [want_scattered, want_gathered] = derivatives(x, w);
  CHECK(scattered.device() == g[0]);
  same_bits(scattered, want_scattered);
  same_bits(gathered, want_gathered);
}

TEST_CASE("cuda devices: conv_general_dilated is a CUDA kernel, gradients too, within f32 rounding", "[cuda_devices]") {
  const std::vector<Device> g = gpus();
  if (g.empty()) return;
  const Array x = randn({2, 6, 5, 4}, 31), k = randn({3, 3, 2, 6}, 32), ct = randn({2, 3, 5, 6}, 33);
  // NHWC/HWIO, stride (2, 1), SAME, rhs dilation 1, two feature groups.
  auto f = [](const Array& a, const Array& b) {
    return conv_general_dilated(a, b, {2, 1}, "SAME", {}, {}, {"NHWC", "HWIO", "NHWC"}, 2);
  };
  auto grads = [&](const Array& a, const Array& b, const Array& c) {
    return vjp(f, a, b).second(c);  // the data gradient (lhs dilated) and the weight gradient (batch groups)
  };
  const Array want = f(x, k);
  const auto [want_dx, want_dk] = grads(x, k, ct);
  const Array gx = device_put(x, g[0]), gk = device_put(k, g[0]), gct = device_put(ct, g[0]);
  auto jf = jit(
      [&](const Array& a, const Array& b, const Array& c) {
        const auto [dx, dk] = grads(a, b, c);
        return std::make_tuple(f(a, b), dx, dk);
      },
      JitOptions{.backend = Backend::cuda});
  CHECK_THAT(jf.lower(gx, gk, gct).compile().as_text(), !Catch::Matchers::Contains("runs on the host"));
  const codegen::cuda::CudaRunCounts before = codegen::cuda::run_counts();
  const auto [y, dx, dk] = jf(gx, gk, gct);
  CHECK(codegen::cuda::run_counts().host_runs == before.host_runs);
  CHECK(y.device() == g[0]);
  CHECK(max_abs_diff(y, want) < 1e-5);
  CHECK(max_abs_diff(dx, want_dx) < 1e-5);
  CHECK(max_abs_diff(dk, want_dk) < 1e-5);
  // Eager on device arrays, a 1-D NCW layout with lhs dilation and batch groups.
  const Array l = randn({4, 2, 9}, 34), r = randn({4, 2, 3}, 35);
  auto h = [](const Array& a, const Array& b) {
    return conv_general_dilated(a, b, {1}, std::vector<std::pair<int64_t, int64_t>>{{1, 2}}, {2}, {2},
                                {"NCH", "OIH", "NCH"}, 1, 2);
  };
  CHECK(max_abs_diff(h(device_put(l, g[0]), device_put(r, g[0])), h(l, r)) < 1e-5);
}
