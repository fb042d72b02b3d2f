// pmap as a primitive: inside jit, grad, jvp, vmap and make_graph, pmap is
// one `pmap` node that runs replicated over the devices (children of
// pmap_test's 4-device parent, tagged [.pmap4]). Checked against eager pmap,
// against vmap with the same axis name (an independent implementation of
// the same semantics), against loops, finite differences and analytic values.
#include <catch2/catch.hpp>

#include <string>

#include "graft/graft.h"
#include "graft/testing.h"
#include "support/arrays.h"

using namespace graft;
using test::check_close;

namespace {

Array data(Shape shape, DType dtype = f32) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return reshape(sin(arange(n, dtype) * 0.7) * 3.0, shape);
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// One replica's work, with every kind of collective.
std::vector<Array> mixed(const Array& v) {
  return {psum(sin(v), "i"), all_gather(v * 2.0f, "i"), v * astype(axis_index("i"), f32) + pmax(v, "i"),
          ppermute(v, "i", {{0, 1}, {1, 2}, {2, 3}, {3, 0}})};
}

}  // namespace

TEST_CASE("pmap primitive 4: jit(pmap) is one pmap node whose replicas run on their own devices", "[.pmap4]") {
  REQUIRE(devices().size() == 4);
  const Array x = data({4, 3});
  Graph g = make_graph([](const Array& v) { return pmap(mixed, "i")(v); })(x);
  INFO(g.to_text());
  CHECK(count(g.to_text(), "= pmap[") == 1);
  CHECK(count(g.to_text(), "psum") == 1);  // inside the body, not batched into a reduce_sum

  const std::vector<Array> eager = pmap(mixed, "i")(x);
  const std::vector<Array> by_vmap = vmap(mixed, 0, 0, "i")(x);
  for (Backend backend : {Backend::interpreter, Backend::cpu}) {
    const std::vector<Array> jitted = jit(pmap(mixed, "i"), JitOptions{.backend = backend})(x);
    REQUIRE(jitted.size() == eager.size());
    for (size_t k = 0; k < eager.size(); ++k) {
      check_close(jitted[k], eager[k]);
      check_close(jitted[k], by_vmap[k]);
    }
  }

  // Each replica allocates its slices on its own device.
  const Array big = data({4, 1 << 14});
  for (const Device& d : devices()) d.reset_peak_memory_stats();
  Array y = jit(pmap([](const Array& v) { return exp(v) * 2.0f + psum(v, "i"); }, "i"))(big);
  check_close(y, exp(big) * 2.0f + sum(big, {0}));
  for (size_t r = 1; r < 4; ++r) {
    INFO("device " << r);
    CHECK(devices()[r].memory_stats().peak_bytes_in_use >= int64_t{4} << 14);
  }
}

TEST_CASE("pmap primitive 4: grad of pmap with mapped, replicated and captured values", "[.pmap4]") {
  const Array x = data({4, 3});
  // d/dx sum(psum(sin x)) = 4 cos x: each of the 4 sums sees every x.
  auto total = [](const Array& v) { return sum(pmap([](const Array& u) { return psum(sin(u), "i"); }, "i")(v)); };
  check_close(grad(total)(x), cos(x) * 4.0f);
  check_close(jit(grad(total))(x), cos(x) * 4.0f);

  // A replicated weight (in_axes none), a captured scale, a replicated output
  // (out_axes none: replica 0's) and a mapped one.
  const Array xs = data({4, 5, 3}, f64) * 0.2;
  const Array w0 = data({3, 2}, f64) * 0.1;
  const Array scale = full({}, 1.5, f64);
  auto model = [&](const Array& w, const Array& v) {
    return std::vector<Array>{pmean(sum(tanh(matmul(v, w)) * scale), "i"), w * 3.0 + psum(v, "i")[0][0]};
  };
  auto loss_with = [&](auto mapper) {
    return [&, mapper](const Array& w, const Array& v) {
      std::vector<Array> out = mapper(w, v);
      return out[0] + sum(out[1] * out[1]);
    };
  };
  const PmapOptions options{.axis_name = "i", .in_axes = Axes{none, 0}, .out_axes = Axes{none, none}};
  auto by_pmap = loss_with([&](const Array& w, const Array& v) { return pmap(model, options)(w, v); });
  auto by_vmap = loss_with([&](const Array& w, const Array& v) { return vmap(model, Axes{none, 0}, Axes{none, none}, "i")(w, v); });
  check_close(by_pmap(w0, xs), by_vmap(w0, xs), 1e-12);
  const auto [gw, gx] = grad<0, 1>(by_pmap)(w0, xs);
  const auto [vw, vx] = grad<0, 1>(by_vmap)(w0, xs);
  check_close(gw, vw, 1e-12);
  check_close(gx, vx, 1e-12);
  const auto [jw, jx] = jit(grad<0, 1>(by_pmap))(w0, xs);
  check_close(jw, vw, 1e-12);
  check_close(jx, vx, 1e-12);
  // The gradient graph holds pmap nodes, not their batched equivalents.
  Graph gg = make_graph(grad<0, 1>(by_pmap))(w0, xs);
  CHECK(count(gg.to_text(), "= pmap[") >= 2);
  // And it survives a JSON round trip.
  Graph back = Graph::from_json(gg.to_json());
  const std::vector<Array> rerun = evaluate(back, {w0, xs});
  check_close(rerun[0], vw, 1e-12);
  check_close(rerun[1], vx, 1e-12);
  // Finite differences, to second order, in both modes.
  testing::check_grads(by_pmap, std::make_tuple(w0, xs), 2);
}

TEST_CASE("pmap primitive 4: jvp of pmap equals jvp of its vmap", "[.pmap4]") {
  const Array x = data({4, 3}, f64);
  const Array t = cos(data({4, 3}, f64));
  auto f = [](const Array& v) { return all_gather(v * v, "i") + psum(exp(v * 0.1), "i"); };
  auto [y, dy] = jvp(pmap(f, "i"), std::make_tuple(x), std::make_tuple(t));
  auto [vy, vdy] = jvp(vmap(f, 0, 0, "i"), std::make_tuple(x), std::make_tuple(t));
  check_close(y, vy, 1e-12);
  check_close(dy, vdy, 1e-12);
}

TEST_CASE("pmap primitive 4: vmap of pmap equals a loop of pmap", "[.pmap4]") {
  const Array x = data({2, 3, 4});  // batch 2, mapped axis (4) at 2 in each example
  const Array w = data({2, 3});     // batched, replicated over the devices
  auto f = [](const Array& v, const Array& u) { return std::vector<Array>{psum(v * u, "i"), v - pmean(v, "i")}; };
  auto mapped = pmap(f, PmapOptions{.axis_name = "i", .in_axes = Axes{1, none}, .out_axes = Axes{none, 1}});
  auto batched = vmap(mapped, Axes{0, 0}, Axes{0, 2});
  const std::vector<Array> got = batched(x, w);
  Graph g = make_graph(batched)(x, w);
  CHECK(count(g.to_text(), "= pmap[") == 1);
  for (int64_t b = 0; b < 2; ++b) {
    INFO("example " << b);
    const std::vector<Array> one = mapped(x[b], w[b]);
    check_close(got[0][b], one[0]);
    check_close(squeeze(take(got[1], array<int32_t>({static_cast<int32_t>(b)}, {1}), 2), {2}), one[1]);
  }
}

TEST_CASE("pmap primitive 4: pmap inside jit, pmap nested in pmap", "[.pmap4]") {
  const Array x = data({4, 3});
  auto f = [](const Array& v) { return pmax(exp(v), "i"); };
  auto program = [&](const Array& v) { return sum(pmap(f, "i")(v * 2.0f), {0}) + 1.0f; };
  check_close(jit(program)(x), program(x));
  check_close(jit(program)(x), sum(vmap(f, 0, 0, "i")(x * 2.0f), {0}) + 1.0f);
  // A pmap nested in another pmap's function runs as vmap on each outer replica.
  auto inner = [](const Array& v) { return psum(v, "j") * astype(axis_index("i") + 1, f32); };
  const Array xy = data({2, 2, 3});
  auto nested = pmap([&](const Array& v) { return pmap(inner, "j")(v); }, "i");
  check_close(nested(xy), vmap(vmap(inner, 0, 0, "j"), 0, 0, "i")(xy));
  check_close(jit(nested)(xy), vmap(vmap(inner, 0, 0, "j"), 0, 0, "i")(xy));
}

TEST_CASE("pmap primitive 4: a pmap node asks for no more devices than exist", "[.pmap4]") {
  auto f = [](const Array& v) { return psum(v, "i"); };
  CHECK_THROWS_WITH(jit(pmap(f, "i"))(data({8, 3})), Catch::Contains("only 4 device(s)"));
}
