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

// The transforms as a promise (API.md, "Threads"): 16 threads call one shared
// grad, vmap, jit-of-grad and checkpointed grad, and each also makes and
// calls transforms of its own (separate caches filling at once), alongside
// eager ops; each result against its closed form.
TEST_CASE("concurrency: 16 threads share and make grad, vmap and jit", "[concurrency]") {
  auto loss = [](const Array& w, const Array& x) { return sum(tanh(w * x)); };  // d/dw = x (1 - tanh^2(wx))
  auto shared_grad = grad(loss);
  auto shared_vmap = vmap([](const Array& v) { return sin(v) * 2.0f; });
  auto shared_jit_grad = jit(grad(loss), JitOptions{.backend = Backend::interpreter});
  auto shared_remat_grad = grad(
      [](const Array& w, const Array& x) { return sum(checkpoint([&](const Array& v) { return tanh(w * v); })(x)); });
  const int threads = 16, iterations = 12;
  const int failures = run_threads(threads, [&](int t) {
    auto own_grad = grad([t](const Array& w) { return sum(w * w) * static_cast<float>(t + 1); });
    auto own_vmap = vmap([t](const Array& v) { return v + static_cast<float>(t); });
    for (int it = 0; it < iterations; ++it) {
      const int n = 2 + (t + it) % 4;
      std::vector<float> ws(static_cast<size_t>(n)), xs(static_cast<size_t>(n));
      for (int i = 0; i < n; ++i) {
        ws[static_cast<size_t>(i)] = 0.1f * static_cast<float>(i + 1);
        xs[static_cast<size_t>(i)] = 0.05f * static_cast<float>(t - it + i);
      }
      const Array w = array(ws, {n}), x = array(xs, {n});
      const std::vector<float> g1 = shared_grad(w, x).to_vector<float>(), g2 = shared_jit_grad(w, x).to_vector<float>(),
                               g3 = shared_remat_grad(w, x).to_vector<float>(),
                               v = shared_vmap(reshape(x, {n, 1})).to_vector<float>(),
                               og = own_grad(w).to_vector<float>(), ov = own_vmap(x).to_vector<float>(),
                               e = exp(x).to_vector<float>();
      for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
        const double th = std::tanh(double(ws[i]) * xs[i]), dg = xs[i] * (1 - th * th);
        for (float got : {g1[i], g2[i], g3[i]})
          if (std::abs(got - dg) > 1e-6) return false;
        if (std::abs(v[i] - 2 * std::sin(xs[i])) > 1e-6f || std::abs(og[i] - 2 * ws[i] * (t + 1)) > 1e-5f ||
            ov[i] != xs[i] + static_cast<float>(t) || std::abs(e[i] - std::exp(xs[i])) > 1e-6f * std::exp(xs[i]))
          return false;
      }
    }
    return true;
  });
  CHECK(failures == 0);
}
