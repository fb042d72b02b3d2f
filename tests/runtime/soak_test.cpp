// Long runs: jitted training steps at batch sizes varying 1..1024 (one
// shape-polymorphic executable), with a checkpointed layer, a host callback
// every step and the parameters saved to disk and read back every 100 steps.
// The device's BFC allocator reserves at most 1.15x its peak in use and
// nothing more after warm-up; the process's resident memory stays flat and
// nothing is traced again.
// ctest runs GRAFT_SOAK_STEPS (default 300); scripts/soak.sh runs 10^4.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <utility>

#include <unistd.h>

#include "graft/graft.h"
#include "graft/npy.h"
#include "runtime/device.h"

using namespace graft;

namespace {

struct SoakMlp {
  Array w1, b1, w2;
};

double resident_mib() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return double(resident) * double(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

int soak_steps() {
  const char* s = std::getenv("GRAFT_SOAK_STEPS");
  return s ? std::atoi(s) : 300;
}

}  // namespace

GRAFT_PYTREE(SoakMlp, w1, b1, w2);

TEST_CASE("soak: jitted training at batch sizes 1..1024 keeps memory flat", "[soak]") {
  constexpr int64_t D = 64, H = 1024, O = 10;
  const int steps = soak_steps();
  REQUIRE(steps >= 150);
  // Warm-up fills the polymorphic executable's bounded cache of per-size
  // instances (64; about 95 sizes are met in 100 draws).
  const int warm_up = std::max(100, steps / 10);
  int64_t callbacks = 0;
  auto loss = [&](const SoakMlp& p, const Array& x, const Array& y) {
    Array h = checkpoint([&](const Array& v) { return graft::tanh(matmul(v, p.w1) + p.b1); })(x);
    Array d = matmul(h, p.w2) - y;
    Array l = mean(d * d);
    io_callback([&callbacks](const Array&) { ++callbacks; }, std::tuple<>{}, ordered, l);
    return l;
  };
  auto train = [&](const SoakMlp& p, const Array& x, const Array& y) {
    auto [l, g] = value_and_grad(loss)(p, x, y);
    return std::make_pair(SoakMlp{p.w1 - 0.01f * g.w1, p.b1 - 0.01f * g.b1, p.w2 - 0.01f * g.w2}, l);
  };
  // Compiled before the first step returns: the steady state is measured from
  // step 0, not a warm-up that a slow background compile (a loaded machine)
  // would leave on the interpreter.
  auto step = jit(train, {.donate_argnums = {0},
                          .wait_for_compile = true,
                          .polymorphic_shapes = {"(64, 1024)", "(1024,)", "(1024, 10)", "(b, 64)", "(b, 10)"}});
  Array key = random::key(3);
  SoakMlp p{random::normal(random::fold_in(key, 0), {D, H}) * 0.1f, zeros({H}),
            random::normal(random::fold_in(key, 1), {H, O}) * 0.03f};
  std::mt19937 rng(11);
  std::uniform_int_distribution<int64_t> batch(1, 1024);
  const std::string path = std::string(GRAFT_TEST_TMPDIR) + "/soak_w1.npy";
  const Device dev = default_device();
  const bool bfc = std::string(runtime::devices()[0]->allocator().name()) == "bfc";  // (platform under ASan)
  double rss_after_warm_up = 0, rss_max = 0;
  MemoryStats after_warm_up{};
  size_t traces_after_warm_up = 0;
  float first_loss = 0, last_loss = 0;
  for (int s = 0; s < steps; ++s) {
    const int64_t b = s == 0 ? 1024 : batch(rng);  // the largest batch first: warm-up sees the peak
    Array x = random::normal(random::fold_in(key, 100 + s), {b, D});
    Array y = graft::sin(matmul(x, ones({D, O}) * 0.05f));
    auto [next, l] = step(p, x, y);
    p = std::move(next);
    last_loss = l.item<float>();
    if (s == 0) first_loss = last_loss;
    if (s % 100 == 99) {  // a checkpoint: saved, read back, training goes on from it
      save_npy(path, p.w1);
      p.w1 = load_npy(path);
    }
    if (s + 1 == warm_up) {
      after_warm_up = dev.memory_stats();
      traces_after_warm_up = step.trace_count();
      rss_after_warm_up = resident_mib();
    }
    if (s >= warm_up) rss_max = std::max(rss_max, resident_mib());
  }
  std::remove(path.c_str());
  const MemoryStats end = dev.memory_stats();
  INFO("steps " << steps << ", losses " << first_loss << " -> " << last_loss << ", peak in use "
                << end.peak_bytes_in_use << ", peak reserved " << end.peak_bytes_reserved << " (after warm-up "
                << after_warm_up.bytes_reserved << "), resident " << rss_after_warm_up << " -> max " << rss_max
                << " MiB");
  CHECK(callbacks == steps);
  CHECK(last_loss < first_loss);
  CHECK(step.trace_count() == traces_after_warm_up);  // one polymorphic executable serves every size
  if (bfc) {
    CHECK(double(end.peak_bytes_reserved) <= 1.15 * double(end.peak_bytes_in_use));
    CHECK(end.peak_bytes_reserved <=
          after_warm_up.bytes_reserved * 110 / 100);  // at most one growth step after warm-up
  }
  CHECK(rss_max <= rss_after_warm_up * 1.10 + 32.0);
  std::printf("soak: %d steps, peak in use %.1f MiB, peak reserved %.1f MiB (%.3fx), resident %.1f -> max %.1f MiB\n",
              steps, end.peak_bytes_in_use / 1048576.0, end.peak_bytes_reserved / 1048576.0,
              double(end.peak_bytes_reserved) / double(end.peak_bytes_in_use), rss_after_warm_up, rss_max);
}
