// pmap: replicas on 4 virtual CPU devices (a child process of this binary
// with GRAFT_CPU_DEVICES=4, since the device count is read once), checked
// against vmap with the same axis name, against analytic values, and for
// placement (shards on their devices, kept in place between calls).
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <future>
#include <thread>

#include "api/array_impl.h"
#include "graft/graft.h"
#include "graft/testing.h"
#include "runtime/communicator.h"
#include "support/arrays.h"
#include "support/shell.h"

using namespace graft;

namespace {

std::vector<float> values(const Array& a) { return a.to_vector<float>(); }

using test::check_close;

Array data(Shape shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return reshape(sin(arange(n, f32) * 0.7f) * 3.0f, shape);
}

}  // namespace

TEST_CASE("pmap: the suite on 4 virtual CPU devices", "[pmap]") {
  graft::test::check_child_passes("GRAFT_CPU_DEVICES=4", "[.pmap4]");
}

TEST_CASE("pmap 4: every collective equals vmap with the same axis name", "[.pmap4]") {
  REQUIRE(devices().size() == 4);
  Array x = data({4, 3, 2});
  auto all = [](const Array& v) {
    return std::vector<Array>{psum(v, "i"),
                              pmean(v, "i"),
                              pmax(v, "i"),
                              pmin(v, "i"),
                              all_gather(v, "i"),
                              all_gather(v, "i", 1),
                              all_gather(v, "i", 0, true),
                              all_gather(v, "i", 1, true),
                              ppermute(v, "i", {{0, 1}, {1, 2}, {2, 3}, {3, 0}}),
                              ppermute(v, "i", {{0, 2}, {3, 1}}),  // replicas 0 and 3 receive nothing: zeros
                              v * astype(axis_index("i"), f32)};
  };
  std::vector<Array> p = pmap(all, "i")(x);
  std::vector<Array> v = vmap(all, 0, 0, "i")(x);
  REQUIRE(p.size() == v.size());
  for (size_t k = 0; k < p.size(); ++k) {
    INFO("output " << k);
    check_close(p[k], v[k]);
  }
  // One analytic value: psum's first element sums x[:, 0, 0] over the devices.
  std::vector<float> xs = values(x), s = values(p[0]);
  CHECK(s[0] == Approx(xs[0] + xs[6] + xs[12] + xs[18]));
  CHECK(s[6] == Approx(s[0]));  // every replica holds the same sum
}

// all_to_all and psum_scatter against their definitions written as
// transposes and sums of the stacked operands, on the devices (their
// kernels) and under vmap (their batching rules); their transpose rules
// through check_grads.
TEST_CASE("pmap 4: all_to_all and psum_scatter equal their definitions", "[.pmap4]") {
  REQUIRE(devices().size() == 4);
  const Array x = data({4, 4, 3});   // replica i holds x[i]: [4, 3]
  const Array x8 = data({4, 8, 3});  // [8, 3]: 4 chunks of 2 rows
  const Array x2 = data({4, 3, 4});  // [3, 4]
  auto f = [](const Array& v, const Array& v8, const Array& v2) {
    return std::vector<Array>{all_to_all(v, "i", 0, 0),        all_to_all(v, "i", 0, 1),
                              all_to_all(v8, "i", 0, 1, true), all_to_all(v8, "i", 0, 0, true),
                              psum_scatter(v, "i", 0),         psum_scatter(v8, "i", 0, true),
                              all_to_all(v2, "i", 1, 0)};
  };
  // Replica r's result, stacked over r.
  const std::vector<Array> want{
      transpose(x, {1, 0, 2}),                                                  // y_r[i, k] = x_i[r, k]
      transpose(x, {1, 2, 0}),                                                  // y_r[k, i] = x_i[r, k]
      reshape(transpose(reshape(x8, {4, 4, 2, 3}), {1, 2, 0, 3}), {4, 2, 12}),  // y_r[m, (i, k)] = x_i[2r + m, k]
      reshape(transpose(reshape(x8, {4, 4, 2, 3}), {1, 0, 2, 3}), {4, 8, 3}),   // y_r[(i, m), k] = x_i[2r + m, k]
      sum(x, {0}),                                                              // y_r = sum_i x_i[r]
      reshape(sum(x8, {0}), {4, 2, 3}),                                         // y_r = sum_i x_i[2r : 2r + 2]
      transpose(x2, {2, 0, 1})};                                                // y_r[i, k] = x_i[k, r]
  for (int mode = 0; mode < 2; ++mode) {
    INFO((mode == 0 ? "pmap" : "vmap"));
    std::vector<Array> got = mode == 0 ? pmap(f, "i")(x, x8, x2) : vmap(f, 0, 0, "i")(x, x8, x2);
    REQUIRE(got.size() == want.size());
    for (size_t k = 0; k < got.size(); ++k) {
      INFO("output " << k);
      check_close(got[k], want[k]);
    }
  }
  // The transpose rules (split and concat swapped; all_gather for psum_scatter).
  const Array w = data({4, 3, 4}) + 0.5f;
  auto loss = [&](const Array& v) {
    auto inner = [](const Array& u) { return psum_scatter(all_to_all(u, "i", 0, 1) * 2.0f, "i", 1, true); };
    return sum(sin(vmap(inner, 0, 0, "i")(v)) * reshape(slice(w, {0, 0, 0}, {4, 3, 1}), {4, 3, 1}));
  };
  CHECK_NOTHROW(testing::check_grads(loss, std::make_tuple(x), 2));
}

TEST_CASE("pmap 4: results are sharded, one shard per device, kept in place", "[.pmap4]") {
  Array x = data({4, 1000});
  auto step = pmap([](const Array& v) { return v * 2.0f + 1.0f; });
  const MemoryStats before = devices()[3].memory_stats();
  Array y = step(x);
  // Replica 3 allocated its result on device 3.
  CHECK(devices()[3].memory_stats().bytes_in_use - before.bytes_in_use >= 4000);
  std::vector<Array> shards = y.addressable_shards();
  REQUIRE(shards.size() == 4);
  for (int i = 0; i < 4; ++i) {
    CHECK(shards[static_cast<size_t>(i)].device() == devices()[static_cast<size_t>(i)]);
    CHECK(shards[static_cast<size_t>(i)].shape() == Shape{1000});
  }
  // The next call takes the shards where they are: nothing is assembled.
  Array z = step(y);
  CHECK(y.impl()->buffer == nullptr);
  CHECK(z.impl()->shards.size() == 4);
  check_close(z, x * 4.0f + 3.0f);
  // Reading y assembles it once, on the default device.
  check_close(y, x * 2.0f + 1.0f);
  REQUIRE(y.impl()->buffer != nullptr);
  CHECK(y.device() == default_device());
}

TEST_CASE("pmap 4: in_axes none replicates, other axes split", "[.pmap4]") {
  Array w = data({3});
  Array x = data({2, 4, 3});  // mapped along axis 1
  auto f = [](const Array& a, const Array& b) { return psum(a * b, "i"); };
  PmapOptions options{.axis_name = "i", .in_axes = Axes{1, none}};
  check_close(pmap(f, options)(x, w), vmap(f, Axes{1, none}, 0, "i")(x, w));
  // Explicit devices, in another order: replica r runs on devices[r].
  options.devices = {devices()[3], devices()[2], devices()[1], devices()[0]};
  Array y = pmap(f, options)(x, w);
  CHECK(y.addressable_shards()[0].device() == devices()[3]);
  check_close(y, vmap(f, Axes{1, none}, 0, "i")(x, w));
}

TEST_CASE("pmap 4: out_axes places each output, none returns a replicated one once", "[.pmap4]") {
  Array x = data({4, 3});
  auto f = [](const Array& v) { return std::make_pair(v * 2.0f, psum(v, "i")); };
  PmapOptions options{.axis_name = "i", .out_axes = Axes{1, none}};
  auto [stacked, total] = pmap(f, options)(x);
  check_close(stacked, transpose(x * 2.0f));  // replicas along axis 1: [3, 4]
  check_close(total, sum(x, {0}));             // one copy, not four
  CHECK(total.shape() == Shape{3});
  CHECK(total.device() == devices()[0]);
  // Negative out_axes count from the end; under a transform pmap is vmap with the same out_axes.
  auto g = pmap([](const Array& v) { return v * 3.0f; }, PmapOptions{.axis_name = "i", .out_axes = -1});
  check_close(g(x), transpose(x * 3.0f));
  auto loss = [&](const Array& v) { return sum(pmap(f, options)(v).second * 2.0f); };
  check_close(grad(loss)(x), full({4, 3}, 2.0f));
  check_close(jit([&](const Array& v) { return pmap(f, options)(v).second; })(x), sum(x, {0}));
  // out_axes that do not fit the output are an error naming the line.
  auto bad = pmap(f, PmapOptions{.axis_name = "i", .out_axes = Axes{3, none}});
  CHECK_THROWS_WITH(bad(x), Catch::Contains("out_axes") && Catch::Contains("pmap_test.cpp"));
}

TEST_CASE("pmap 4: donate_argnums lets outputs take over the argument's shards", "[.pmap4]") {
  auto step = pmap([](const Array& v) { return v * 0.5f + 1.0f; }, PmapOptions{.donate_argnums = {0}});
  Array x = pmap([](const Array& v) { return v; })(data({4, 256}));  // sharded on the 4 devices
  std::vector<const void*> before;
  for (const Array& s : x.addressable_shards()) before.push_back(s.unsafe_buffer_pointer());
  Array want = data({4, 256}) * 0.5f + 1.0f;
  Array y = step(x);
  CHECK(x.is_deleted());
  CHECK_THROWS_AS(step(x), DonatedArrayError);
  std::vector<Array> shards = y.addressable_shards();
  for (size_t i = 0; i < 4; ++i) CHECK(shards[i].unsafe_buffer_pointer() == before[i]);  // in place
  check_close(y, want);
  // A replicated donated argument is deleted but never shared between replicas' outputs.
  auto both = pmap([](const Array& v, const Array& w) { return v + w; },
                   PmapOptions{.in_axes = Axes{0, none}, .donate_argnums = {0, 1}});
  Array w = data({256});
  Array z = both(data({4, 256}), w);
  CHECK(w.is_deleted());
  check_close(z, data({4, 256}) + reshape(data({256}), {1, 256}));
}

TEST_CASE("pmap 4: data-parallel gradients (pmap of grad, pmean) equal the full-batch gradient", "[.pmap4]") {
  Array w = data({3, 2}) * 0.3f;
  Array xs = data({4, 5, 3});  // 4 devices x 5 examples
  Array ys = cos(data({4, 5, 2}));
  auto loss = [](const Array& w, const Array& x, const Array& y) {
    Array e = tanh(matmul(x, w)) - y;
    return mean(e * e);
  };
  auto step = pmap(
      [&](const Array& w, const Array& x, const Array& y) { return pmean(grad(loss)(w, x, y), "i"); },
      PmapOptions{.axis_name = "i", .in_axes = Axes{none, 0, 0}});
  Array g = step(w, xs, ys);
  REQUIRE(g.shape() == Shape{4, 3, 2});
  Array full = grad(loss)(w, reshape(xs, {20, 3}), reshape(ys, {20, 2}));
  for (const Array& shard : g.addressable_shards()) check_close(shard, full, 1e-5);
}

TEST_CASE("pmap 4: grad of a pmapped function, pmap of vmap, jit inside and outside", "[.pmap4]") {
  Array x = data({4, 3});
  // grad(pmap): d/dx sum(psum(sin x)) = 4 cos x (each of the 4 sums sees every x).
  auto total = [](const Array& v) { return sum(pmap([](const Array& u) { return psum(sin(u), "i"); }, "i")(v)); };
  check_close(grad(total)(x), cos(x) * 4.0f);
  // pmap(vmap): two named axes; psum over both sums everything.
  Array xy = data({4, 2, 3});
  auto inner = [](const Array& v) { return psum(psum(v, "j"), "i") - v * astype(axis_index("j"), f32); };
  auto nested = pmap(vmap(inner, 0, 0, "j"), "i");
  auto batched = vmap(vmap(inner, 0, 0, "j"), 0, 0, "i");
  check_close(nested(xy), batched(xy));
  // vmap of pmap: the inner pmap is traced by vmap, as its batched equivalent.
  auto outer = vmap(pmap(vmap(inner, 0, 0, "j"), "i"), 0, 0, "k");
  Array xyz = data({2, 4, 2, 3});
  check_close(outer(xyz), vmap(batched, 0, 0, "k")(xyz));
  // jit inside pmap is inlined into the replica's graph; jit outside traces pmap as vmap.
  auto f = [](const Array& v) { return pmax(exp(v), "i"); };
  check_close(pmap(jit(f), "i")(x), vmap(f, 0, 0, "i")(x));
  check_close(jit(pmap(f, "i"))(x), vmap(f, 0, 0, "i")(x));
}

TEST_CASE("pmap 4: concurrent calls from several threads neither deadlock nor mix replicas", "[.pmap4]") {
  auto f = pmap([](const Array& v) { return psum(v, "i") + astype(axis_index("i"), f32); }, "i");
  // Two calls on the devices in opposite orders, as well as in the same order.
  const std::vector<Device> all = devices();
  auto g = pmap([](const Array& v) { return psum(v, "i"); },
                PmapOptions{.axis_name = "i", .devices = {all[3], all[2], all[1], all[0]}});
  std::vector<std::future<bool>> callers;
  for (int t = 0; t < 4; ++t)
    callers.push_back(std::async(std::launch::async, [&, t] {
      bool ok = true;
      for (int k = 0; k < 25; ++k) {
        const float base = static_cast<float>(t * 100 + k);
        Array x = array<float>({base, base + 1, base + 2, base + 3}, {4});
        std::vector<float> y = (t % 2 ? g(x) : f(x)).to_vector<float>();
        for (int r = 0; r < 4; ++r) ok = ok && y[static_cast<size_t>(r)] == 4 * base + 6 + (t % 2 ? 0 : r);
      }
      return ok;
    }));
  for (auto& c : callers) {
    if (c.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
      FAIL_CHECK("concurrent pmap calls deadlocked");
      std::_Exit(3);
    }
    CHECK(c.get());
  }
}

TEST_CASE("pmap 4: bad input gets clear errors", "[.pmap4]") {
  auto f = pmap([](const Array& v) { return psum(v, "i"); }, "i");
  CHECK_THROWS_WITH(f(data({8, 2})), Catch::Contains("mapped axis has size 8") && Catch::Contains("only 4 device"));
  auto g = pmap([](const Array& v) { return v; }, PmapOptions{.axis_name = "i", .devices = {devices()[0]}});
  CHECK_THROWS_WITH(g(data({2, 2})), Catch::Contains("2") && Catch::Contains("1 devices were given"));
  auto h = pmap([](const Array& v) { return psum(v, "j"); }, "i");
  CHECK_THROWS_AS(h(data({4, 2})), ShapeError);
  CHECK_THROWS_WITH(h(data({4, 2})), Catch::Contains("unbound axis name 'j'"));
  auto twice = pmap([](const Array& v) { return v; }, PmapOptions{.devices = {devices()[1], devices()[1]}});
  CHECK_THROWS_WITH(twice(data({2, 2})), Catch::Contains("listed twice"));
}

// A replica that fails (a NaN caught by GRAFT_DEBUG_NANS in replica 2 only)
// while the others wait for it in a psum: the call ends with replica 2's error.
TEST_CASE("pmap 4: a failing replica surfaces its error and does not hang the others", "[.pmap4_nans]") {
  REQUIRE(devices().size() == 4);
  Array x = array<float>({1, 2, -3, 4}, {4});
  auto f = pmap([](const Array& v) { return psum(log(v), "i"); }, "i");
  auto call = std::async(std::launch::async, [&] { f(x); });
  if (call.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
    FAIL_CHECK("pmap hung after a replica failed");
    std::_Exit(3);  // the stuck replicas cannot be joined
  }
  CHECK_THROWS_WITH(call.get(), Catch::Contains("GRAFT_DEBUG_NANS") && Catch::Contains("log") &&
                                    Catch::Contains("produced a NaN") &&
                                    Catch::Contains("pmap_test.cpp"));
  // The devices are usable again afterwards.
  check_close(f(array<float>({1, 2, 3, 4}, {4})), full({4}, std::log(24.0f)));
}

TEST_CASE("pmap: a failing replica", "[pmap]") {
  graft::test::check_child_passes("GRAFT_CPU_DEVICES=4 GRAFT_DEBUG_NANS=1", "[.pmap4_nans]");
}

TEST_CASE("pmap: one device runs f on the caller's device", "[pmap]") {
  Array x = data({1, 5});
  Array y = pmap([](const Array& v) { return psum(v * v, "i"); }, "i")(x);
  check_close(y, x * x);
  CHECK(y.addressable_shards().size() == 1);
}

TEST_CASE("thread communicator: mismatched collectives and aborts end every rank", "[pmap][runtime]") {
  runtime::ThreadCommunicator comm(3);
  std::vector<std::string> errors(3);
  std::vector<std::jthread> threads;
  for (int r = 0; r < 3; ++r)
    threads.emplace_back([&, r] {
      float in[2] = {1, 2}, out[6];
      const std::string what = r == 2 ? "psum f32[2]" : "psum f32[1]";
      try {
        comm.all_gather(r, in, out, r == 2 ? 8 : 4, what);
      } catch (const ShapeError& e) {
        errors[static_cast<size_t>(r)] = e.what();
      }
    });
  threads.clear();  // join
  for (const std::string& e : errors) {
    CHECK_THAT(e, Catch::Contains("collective mismatch") && Catch::Contains("replica 0 runs psum f32[1]") &&
                      Catch::Contains("replica 2 runs psum f32[2]"));
  }
  // Rank 0 waits in a gather; rank 1 aborts instead of joining it.
  runtime::ThreadCommunicator group(2);
  auto waiting = std::async(std::launch::async, [&] {
    float in = 1, out[2];
    group.all_gather(0, &in, out, 4, "psum f32[]");
  });
  group.abort("replica 1 failed");
  REQUIRE(waiting.wait_for(std::chrono::seconds(30)) == std::future_status::ready);
  CHECK_THROWS_AS(waiting.get(), runtime::CollectiveAborted);
}
