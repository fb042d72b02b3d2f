// checkpoint: same values and gradients, fewer residuals kept for the backward pass.
#include <catch2/catch.hpp>
#include <cmath>

#include "graft/graft.h"
#include "ir/graph.h"
#include "runtime/device.h"
#include "runtime/platform_allocator.h"
#include "transforms/vjp.h"

using namespace graft;

namespace {
Array chain(const Array& x) { return graft::sin(graft::sin(graft::sin(graft::sin(x)))); }
}  // namespace

TEST_CASE("checkpoint: same results, recomputation instead of saved values", "[transforms][checkpoint]") {
  Array x = array<double>({0.3, -1.1, 2.0});
  auto plain = [](const Array& a) { return sum(chain(a)); };
  auto ckpt = [](const Array& a) { return sum(checkpoint(chain)(a)); };
  CHECK(ckpt(x).item<double>() == Approx(plain(x).item<double>()));
  std::vector<double> g1 = grad(plain)(x).to_vector<double>(), g2 = grad(ckpt)(x).to_vector<double>();
  for (int i = 0; i < 3; ++i) CHECK(g2[i] == Approx(g1[i]));
  // Forward mode and second order still work through the remat node.
  auto [y, t] = jvp(ckpt, std::make_tuple(x), std::make_tuple(full({3}, 1.0, f64)));
  CHECK(t.item<double>() == Approx(g1[0] + g1[1] + g1[2]));
  std::vector<double> h = grad([&](const Array& a) { return sum(grad(ckpt)(a)); })(x).to_vector<double>();
  std::vector<double> hp = grad([&](const Array& a) { return sum(grad(plain)(a)); })(x).to_vector<double>();
  for (int i = 0; i < 3; ++i) CHECK(h[i] == Approx(hp[i]));

  // Residuals: without checkpoint the backward pass reads the chain's
  // intermediates (the cosines of every stage); with it, only x and the output.
  Graph gp = make_graph(plain)(x), gc = make_graph(ckpt)(x);
  size_t saved_plain = transforms::count_residuals(gp.ir(), {true});
  size_t saved_ckpt = transforms::count_residuals(gc.ir(), {true});
  INFO("residuals without checkpoint: " << saved_plain << ", with: " << saved_ckpt);
  CHECK(saved_plain >= 4);
  CHECK(saved_ckpt < saved_plain);
  CHECK(saved_ckpt <= 1);
  // The grad graph recomputes inside the backward pass; the forward pass's remat node only
  // yielded the value, which grad drops, so make_graph leaves it out.
  Graph gg = make_graph([&](const Array& a) { return grad(ckpt)(a); })(x);
  int remats = 0, sines = 0;
  for (const auto& n : gg.ir().nodes()) {
    remats += n.op == ir::Op::remat;
    sines += n.op == ir::Op::sin;
  }
  CHECK(remats == 0);  // the tangent remat was transposed away, the forward one is dead
  CHECK(sines == 3);   // the backward pass recomputes sin of the first three stages
  CHECK(Graph::from_json(gg.to_json()).to_json() == gg.to_json());
}

TEST_CASE("checkpoint: lowers the peak memory of a gradient", "[transforms][checkpoint][memory]") {
  // Six blocks of four sines on 256 KiB arrays. Without checkpoint the
  // backward pass needs every stage's cosine (24 arrays alive at the turn);
  // with each block checkpointed it keeps the six block inputs and
  // recomputes one block at a time.
  auto blocks = [](bool remat) {
    return [remat](const Array& x) {
      Array y = x;
      for (int b = 0; b < 6; ++b) y = remat ? checkpoint(chain)(y) : chain(y);
      return sum(y);
    };
  };
  Array x = astype(linspace(-1.0, 1.0, 1 << 16), f32);
  Graph plain = make_graph(grad(blocks(false)))(x), ckpt = make_graph(grad(blocks(true)))(x);
  auto peak_of = [&](const Graph& g, std::vector<float>* out) {
    runtime::Device device("cpu", 91, std::make_unique<runtime::PlatformAllocator>());
    runtime::DeviceScope on(device);
    Array input = x + 0.0f;  // on the test device
    device.allocator().reset_peak();
    const int64_t base = device.memory_stats().bytes_in_use;
    *out = evaluate(g, {input})[0].to_vector<float>();
    return device.memory_stats().peak_bytes_in_use - base;
  };
  std::vector<float> g_plain, g_ckpt;
  const int64_t peak_plain = peak_of(plain, &g_plain), peak_ckpt = peak_of(ckpt, &g_ckpt);
  const int64_t array_bytes = 4 << 16;
  INFO("peak without checkpoint: " << peak_plain / array_bytes << " arrays, with: " << peak_ckpt / array_bytes);
  CHECK(peak_plain >= 20 * array_bytes);
  CHECK(peak_ckpt * 2 < peak_plain);
  REQUIRE(g_ckpt.size() == g_plain.size());
  for (size_t i = 0; i < g_plain.size(); i += 997) CHECK(g_ckpt[i] == Approx(g_plain[i]).epsilon(1e-5));
}
