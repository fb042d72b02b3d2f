// Many threads at once: one jitted function (interpreter and cpu backends,
// its first calls racing the background compile of its module), eager ops,
// new jitted functions filling the caches, and pmap over 2 devices, all in
// parallel; every result checked. Runs in the suite, and under
// ThreadSanitizer through scripts/check_tsan.sh.
#include <catch2/catch.hpp>
#include <atomic>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "graft/graft.h"
#include "support/shell.h"

using namespace graft;

namespace {

Array model(const Array& x) { return tanh(x * 0.5f) + sum(x * x) * 0.001f; }

float model_at(const std::vector<float>& xs, size_t i) {
  double s = 0;
  for (float v : xs) s += static_cast<double>(v) * v;
  return static_cast<float>(std::tanh(xs[i] * 0.5) + s * 0.001);
}

// Runs `work(thread index)` on `threads` threads at once; counts failures.
template <class Work>
int run_threads(int threads, Work work) {
  std::atomic<int> failures{0};
  std::atomic<int> ready{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      ++ready;
      while (ready.load() < threads) std::this_thread::yield();  // start together
      try {
        if (!work(t)) ++failures;
      } catch (const std::exception& e) {
        std::printf("thread %d: %s\n", t, e.what());
        ++failures;
      }
    });
  for (std::thread& th : pool) th.join();
  return failures.load();
}

}  // namespace

TEST_CASE("concurrency: threads share a jitted function, eager ops and the jit caches", "[concurrency]") {
  auto fi = jit(model, JitOptions{.backend = Backend::interpreter});
  auto fc = jit(model, JitOptions{.backend = Backend::cpu});  // tiered: early calls interpret while it compiles
  const int threads = 8, iterations = 40;
  const int failures = run_threads(threads, [&](int t) {
    for (int it = 0; it < iterations; ++it) {
      const int n = 4 + (t + it) % 5;  // a few shapes: cache hits and misses at once
      std::vector<float> xs(static_cast<size_t>(n));
      for (int i = 0; i < n; ++i) xs[static_cast<size_t>(i)] = static_cast<float>(t - i) * 0.25f;
      const Array x = array(xs, {n});
      const std::vector<float> a = fi(x).to_vector<float>(), b = fc(x).to_vector<float>();
      const std::vector<float> e = model(x).to_vector<float>();  // eager
      for (int i = 0; i < n; ++i) {
        const float want = model_at(xs, static_cast<size_t>(i));
        if (std::abs(a[static_cast<size_t>(i)] - want) > 1e-5f || std::abs(b[static_cast<size_t>(i)] - want) > 1e-5f ||
            std::abs(e[static_cast<size_t>(i)] - want) > 1e-5f)
          return false;
      }
      // A jitted function of this thread's own: the caches grow from several threads.
      if (it % 10 == 0) {
        const float k = static_cast<float>(t * 100 + it);
        auto g = jit([k](const Array& v) { return v * k; }, JitOptions{.backend = Backend::interpreter});
        if (g(x).to_vector<float>()[0] != xs[0] * k) return false;
      }
    }
    return true;
  });
  CHECK(failures == 0);
}

TEST_CASE("concurrency: pmap from several threads at once", "[concurrency]") {
  graft::test::check_child_passes("GRAFT_CPU_DEVICES=2", "[.concurrency_pmap2]");
}

TEST_CASE("concurrency child: pmap calls from 4 threads on 2 devices", "[.concurrency_pmap2]") {
  REQUIRE(devices().size() == 2);
  auto p = pmap([](const Array& v) { return psum(v * 2.0f, "i"); }, "i");
  const int failures = run_threads(4, [&](int t) {
    for (int it = 0; it < 20; ++it) {
      const float a = static_cast<float>(t + it), b = 1.5f;
      const std::vector<float> y = p(array<float>({a, b}, {2})).to_vector<float>();
      if (y.size() != 2 || y[0] != 2 * (a + b) || y[1] != 2 * (a + b)) return false;
    }
    return true;
  });
  CHECK(failures == 0);
}
