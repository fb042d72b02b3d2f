// checkpoint: same values and gradients, fewer residuals kept for the backward pass.
#include <catch2/catch.hpp>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>

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

namespace {

// A residual block of two matmuls: y = h + tanh(tanh(z1) W2), z1 = h W1
// named "z1". Reverse mode reads h, tanh(z1) and the second tanh; from z1
// alone it recomputes the second matmul (the first tanh's derivative reads
// that tanh's own output, as in JAX, so naming tanh(z1) would not spare the
// first matmul).
Array two_dot_block(const Array& h, const Array& w1, const Array& w2) {
  Array z1 = checkpoint_name(matmul(h, w1), "z1");
  return h + graft::tanh(matmul(graft::tanh(z1), w2));
}

Array deterministic(Shape shape, double phase, double scale) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return reshape(astype(graft::sin(arange(n) * 0.37 + phase) * scale, f32), shape);
}

}  // namespace

TEST_CASE("checkpoint: under jit the forward pass fuses, so remat costs no memory",
          "[transforms][checkpoint][memory]") {
  // 100 elementwise layers of 1 MiB each: without checkpoint, fusion runs
  // forward and backward in one kernel (no temporaries). Each layer
  // checkpointed used to keep the 99 layer outputs as opaque remat results.
  auto layer = [](const Array& x) { return graft::sin(x) * 0.5f + x; };
  auto chain = [&](bool ckpt) {
    return [=](const Array& x) {
      Array y = x;
      for (int i = 0; i < 100; ++i) y = ckpt ? checkpoint(layer)(y) : layer(y);
      return sum(y);
    };
  };
  Array x = astype(linspace(-1.0, 1.0, 1 << 18), f32);
  for (Backend backend : {Backend::interpreter, Backend::cpu}) {
    JitOptions options;
    options.backend = backend;
    options.wait_for_compile = true;
    auto plain = jit(grad(chain(false)), options).lower(x).compile();
    auto ckpt = jit(grad(chain(true)), options).lower(x).compile();
    INFO("backend " << static_cast<int>(backend) << ": temporaries " << plain.memory_analysis().temp_bytes
                    << " without checkpoint, " << ckpt.memory_analysis().temp_bytes << " with");
    CHECK(ckpt.memory_analysis().temp_bytes <= plain.memory_analysis().temp_bytes);
    CHECK(ckpt.memory_analysis().temp_bytes == 0);
    CHECK(ckpt.as_text().find("remat") == std::string::npos);
    std::vector<float> gp = plain(x).to_vector<float>(), gc = ckpt(x).to_vector<float>();
    REQUIRE(gp.size() == gc.size());
    for (size_t i = 0; i < gp.size(); i += 4099) CHECK(gc[i] == Approx(gp[i]).epsilon(1e-6));
  }
}

TEST_CASE("checkpoint policies: what each keeps, its memory and its recomputed flops",
          "[transforms][checkpoint][memory]") {
  using namespace checkpoint_policies;
  constexpr int kLayers = 6, kBatch = 64, kWidth = 128;
  Array h0 = deterministic({kBatch, kWidth}, 0.1, 1.0);
  std::vector<Array> w1s, w2s;
  for (int l = 0; l < kLayers; ++l) {
    w1s.push_back(deterministic({kWidth, kWidth}, 1.0 + l, 0.09));
    w2s.push_back(deterministic({kWidth, kWidth}, 2.0 + l, 0.09));
  }
  auto net = [&](std::optional<Policy> policy) {
    return [=](const Array& h, const std::vector<Array>& w1, const std::vector<Array>& w2) {
      Array y = h;
      for (int l = 0; l < kLayers; ++l)
        y = policy ? checkpoint(two_dot_block, *policy)(y, w1[l], w2[l]) : two_dot_block(y, w1[l], w2[l]);
      return sum(y * y);
    };
  };
  struct Row {
    const char* name;
    std::optional<Policy> policy;
    int dots_recomputed;  // per layer
  };
  const std::vector<Row> rows = {
      {"no checkpoint", std::nullopt, 0},
      {"everything_saveable", everything_saveable, 0},
      {"nothing_saveable", nothing_saveable, 2},
      {"dots_saveable", dots_saveable, 0},
      {"dots_with_no_batch_dims_saveable", dots_with_no_batch_dims_saveable, 0},
      {"save_only_these_names z1", save_only_these_names({"z1"}), 1},
      {"save_anything_except_these_names z1", save_anything_except_these_names({"z1"}), 0},
  };
  JitOptions options;
  options.backend = Backend::interpreter;
  const double dot_flops = 2.0 * kBatch * kWidth * kWidth;
  const int64_t array_bytes = int64_t{4} * kBatch * kWidth;
  std::vector<int64_t> temps;
  std::vector<double> flops;
  std::vector<std::vector<float>> grads;
  for (const Row& row : rows) {
    auto compiled = jit(grad<0, 1, 2>(net(row.policy)), options).lower(h0, w1s, w2s).compile();
    temps.push_back(compiled.memory_analysis().temp_bytes);
    flops.push_back(compiled.cost_analysis().flops);
    auto [gh, gw1, gw2] = compiled(h0, w1s, w2s);
    std::vector<float> all = gh.to_vector<float>();
    for (int l = 0; l < kLayers; ++l)
      for (const Array& g : {gw1[l], gw2[l]}) {
        std::vector<float> v = g.to_vector<float>();
        all.insert(all.end(), v.begin(), v.end());
      }
    grads.push_back(std::move(all));
    UNSCOPED_INFO(row.name << ": temporaries " << temps.back() / array_bytes << " arrays of the batch, flops "
                           << flops.back() / dot_flops << " matmuls");
  }
  for (size_t r = 0; r < rows.size(); ++r) {
    INFO(rows[r].name);
    // Never worse than no checkpoint; the same gradient.
    CHECK(temps[r] <= temps[0]);
    for (size_t i = 0; i < grads[0].size(); i += 97)
      CHECK(grads[r][i] == Approx(grads[0][i]).epsilon(1e-5).margin(1e-6));
    // The recomputed matmuls are counted (a recomputed tanh adds a few flops per element).
    const double extra = flops[r] - flops[0];
    CHECK(extra >= kLayers * rows[r].dots_recomputed * dot_flops);
    CHECK(extra <= kLayers * rows[r].dots_recomputed * dot_flops + kLayers * 2.0 * 40 * kBatch * kWidth);
  }
  // Saving less keeps less: nothing (h per layer) < only z1 (h, z1) < no checkpoint (h and two tanh).
  CHECK(temps[2] < temps[5]);
  CHECK(temps[5] < temps[0]);
  CHECK(flops[1] == flops[0]);
}

TEST_CASE("checkpoint policies: dots with batch axes, names, and the graph's policy", "[transforms][checkpoint]") {
  using namespace checkpoint_policies;
  // A batched matmul (batch axis 0) is a dot with batch dims.
  auto heads = [](const Array& h, const Array& w) { return graft::tanh(matmul(graft::tanh(matmul(h, w)), w)); };
  Array h = deterministic({4, 8, 16}, 0.3, 1.0), w = deterministic({4, 16, 16}, 0.7, 0.2);
  auto loss = [&](const Policy& p) {
    return [=](const Array& a, const Array& b) { return sum(checkpoint(heads, p)(a, b)); };
  };
  auto saved = [&](const Policy& p) {
    return transforms::count_residuals(make_graph(loss(p))(h, w).ir(), {true, true});
  };
  const size_t nothing = saved(nothing_saveable);
  CHECK(saved(dots_with_no_batch_dims_saveable) == nothing);  // its dots all have a batch axis
  CHECK(saved(dots_saveable) > nothing);
  CHECK(saved(everything_saveable) >= saved(dots_saveable));
  auto g_plain = grad([&](const Array& a) { return sum(heads(a, w)); })(h).to_vector<float>();
  for (const Policy& p : {nothing_saveable, dots_saveable, dots_with_no_batch_dims_saveable, everything_saveable}) {
    std::vector<float> g = grad(loss(p))(h, w).to_vector<float>();
    for (size_t i = 0; i < g.size(); i += 7) CHECK(g[i] == Approx(g_plain[i]).epsilon(1e-5).margin(1e-6));
  }

  // checkpoint_name: eagerly the array itself; traced, a node jit removes; an identity under grad and vmap.
  Array x = array<float>({0.5f, -1.0f, 2.0f});
  Array named = checkpoint_name(x, "x");
  CHECK(named.unsafe_buffer_pointer() == x.unsafe_buffer_pointer());
  Graph g = make_graph([](const Array& a) { return checkpoint_name(graft::sin(a), "s"); })(x);
  CHECK(g.to_text().find("checkpoint_name[name='s']") != std::string::npos);
  auto jitted = jit([](const Array& a) { return sum(checkpoint_name(graft::sin(a), "s")); });
  const std::string text = jitted.lower(x).compile().as_text();
  CHECK(text.substr(0, text.find("generated C++")).find("checkpoint_name") == std::string::npos);
  std::vector<float> dg =
      grad([](const Array& a) { return sum(checkpoint_name(graft::sin(a), "s")); })(x).to_vector<float>();
  for (int i = 0; i < 3; ++i) CHECK(dg[i] == Approx(std::cos(x.to_vector<float>()[i])));
  Array v = vmap([](const Array& a) { return checkpoint_name(a * 2.0f, "twice"); })(reshape(x, {3, 1}));
  CHECK(v.to_vector<float>() == std::vector<float>{1.0f, -2.0f, 4.0f});

  // The policy is part of the graph: text, JSON round trip, and a version 4 document reads as nothing_saveable.
  Graph pg = make_graph(loss(save_only_these_names({"a b", "c:1"})))(h, w);
  CHECK(pg.to_text().find("policy='save_only_these_names 3:a b 3:c:1'") != std::string::npos);
  CHECK(Graph::from_json(pg.to_json()).to_json() == pg.to_json());
  auto doc = nlohmann::json::parse(pg.to_json());
  doc["version"] = 4;
  for (auto& n : doc["graph"]["nodes"])
    if (n["op"] == "remat") n["attrs"].erase("policy");
  CHECK(Graph::from_json(doc.dump()).to_text().find("policy='nothing_saveable'") != std::string::npos);
  for (const char* bad : {"most_things_saveable", "save_only_these_names 9:a", "dots_saveable 1:a",
                          "save_only_these_names x:a", "save_only_these_names 1a"}) {
    auto broken = nlohmann::json::parse(pg.to_json());
    for (auto& n : broken["graph"]["nodes"])
      if (n["op"] == "remat") n["attrs"]["policy"]["string"] = bad;
    INFO(bad);
    CHECK_THROWS_AS(Graph::from_json(broken.dump()), GraphFormatError);
  }
}
