// Tiered execution of jit's cpu backend: until the module is compiled and
// loaded a call runs the fused graph on the interpreter (same values), and
// later calls run the module; wait_for_compile and Lowered::compile wait; a
// module that fails to compile leaves the executable on the interpreter;
// equal kernels compile once, and many distinct kernels are split into
// modules compiled in parallel.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "api/jit_tiers.h"
#include "codegen/cpu/background_compile.h"
#include "codegen/cpu/compiler.h"
#include "graft/graft.h"
#include "support/arrays.h"
#include "support/shell.h"

using namespace graft;
using Catch::Matchers::Contains;
namespace cg = graft::codegen::cpu;
using graft::test::randn;
using graft::test::values;

namespace {

// A shape no other test compiles, so that the module is really built here.
int64_t unique_size() { return 1000 + static_cast<int64_t>(getpid() % 997); }

}  // namespace

TEST_CASE("jit tiers: calls run on the interpreter until the module is loaded", "[jit][cpu][tiers]") {
  REQUIRE(cg::cpu_compiler_available());
  auto f = [](const Array& a) { return logistic(tanh(a * 1.5f + 0.5f) * a) - exp(a) * 0.25f; };
  Array x = randn({unique_size(), 3}, 7);
  const std::vector<double> want = values(jit(f, {.backend = Backend::interpreter})(x));
  auto jf = jit(f, {.backend = Backend::cpu});
  {
    cg::testing::HoldBackgroundCompiles hold;  // the module cannot be built yet
    const cg::CompileStats s0 = cg::compile_stats();
    const detail::TierCounts t0 = detail::tier_counts();
    CHECK(values(jf(x)) == want);
    CHECK(values(jf(x)) == want);
    CHECK(detail::tier_counts().interpreted == t0.interpreted + 2);
    CHECK(detail::tier_counts().compiled == t0.compiled);
    CHECK(cg::compile_stats().compiles + cg::compile_stats().disk_hits == s0.compiles + s0.disk_hits);
  }
  // Released: the module is built in the background; a later call runs it, with the same bits.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  for (;;) {
    const detail::TierCounts before = detail::tier_counts();
    CHECK(values(jf(x)) == want);
    if (detail::tier_counts().compiled > before.compiled) break;
    REQUIRE(std::chrono::steady_clock::now() < deadline);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

TEST_CASE("jit tiers: wait_for_compile and Lowered::compile run compiled code from the first call", "[jit][cpu][tiers]") {
  auto f = [](const Array& a) { return exp(sin(a) * 2.0f + a) - a * 0.5f; };
  Array x = randn({unique_size() + 1}, 8);
  const std::vector<double> want = values(jit(f, {.backend = Backend::interpreter})(x));
  cg::testing::HoldBackgroundCompiles hold;  // only a compile on the caller's thread can finish
  const detail::TierCounts t0 = detail::tier_counts();
  CHECK(values(jit(f, {.backend = Backend::cpu, .wait_for_compile = true})(x)) == want);
  CHECK(detail::tier_counts().compiled == t0.compiled + 1);
  auto compiled = jit(f, {.backend = Backend::cpu}).lower(x).compile();
  CHECK_THAT(compiled.as_text(), Contains("backend: cpu (1 fused kernels compiled to C++"));
  CHECK(values(compiled(x)) == want);
  CHECK(detail::tier_counts().compiled == t0.compiled + 2);
}

namespace {
// 30 row sums of 30 distinct kernels (an op chain of its own each, on a
// slice of its own: sizes are not part of a kernel's source), added.
template <class Base>
Array thirty_chains(const Array& a, const Base& base) {
  Array acc = zeros({2}, f32);
  for (int64_t k = 1; k <= 30; ++k) {
    Array y = base(slice(a, {0, 0}, {2, k}) * 0.25f);
    if (k & 1) y = y * y;
    if (k & 2) y = sin(y);
    if (k & 4) y = y + 1.0f;
    if (k & 8) y = cos(y);
    if (k & 16) y = -y;
    acc = acc + sum(y, {1});
  }
  return acc;
}
}  // namespace

TEST_CASE("jit tiers: equal kernels compile once, many distinct ones are split into modules", "[jit][cpu][tiers]") {
  // 12 layers: every layer's forward and backward kernels have the same source.
  std::vector<Array> ws;
  for (int i = 0; i < 12; ++i) ws.push_back(randn({8, 8}, 100 + i) * 0.3f);
  Array x = randn({5, 8}, 9);
  auto loss = [](const std::vector<Array>& w, const Array& a) {
    Array h = a;
    for (const Array& wi : w) h = tanh(matmul(h, wi));
    return sum(h * h);
  };
  auto deep = jit(grad(loss), {.backend = Backend::cpu}).lower(ws, x).compile();
  const std::string text = deep.as_text();
  INFO(text);
  // Two sources: the layers' kernel and the last layer's (which starts the
  // backward pass). The 1 of tanh's derivative, shared by all layers, is
  // copied into each kernel, not written out by the first (a third source).
  CHECK_THAT(text, Contains("fused kernels compiled to C++, 2 distinct, in 1 module)"));
  const std::vector<Array> got = deep(ws, x), want = jit(grad(loss), {.backend = Backend::interpreter})(ws, x);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(values(got[i]) == values(want[i]));

  // 30 kernels of 30 different op chains (sizes are not part of a kernel's
  // source) and one adding their sums: 31 distinct kernels, 2 modules.
  auto slices = [](const Array& a) { return thirty_chains(a, [](const Array& x) { return exp(x); }); };
  Array v = randn({2, 40}, 10);
  auto split = jit(slices, {.backend = Backend::cpu}).lower(v).compile();
  CHECK_THAT(split.as_text(), Contains("31 fused kernels compiled to C++, 31 distinct, in 2 modules)"));
  CHECK(values(split(v)) == values(jit(slices, {.backend = Backend::interpreter})(v)));
}

// Run in a child whose GRAFT_CXX answers --version but fails every compile.
TEST_CASE("jit tiers (child): a failed background compile leaves the executable on the interpreter",
          "[.child_jit_failing_compiler]") {
  auto f = [](const Array& a) { return tanh(a) * 3.0f; };
  Array x = randn({17}, 11);
  const std::vector<double> want = values(jit(f, {.backend = Backend::interpreter})(x));
  auto jf = jit(f, {.backend = Backend::cpu});
  CHECK(values(jf(x)) == want);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (cg::compile_stats().failures == 0) {
    REQUIRE(std::chrono::steady_clock::now() < deadline);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the failure is published after it is counted
  const detail::TierCounts t0 = detail::tier_counts();
  CHECK(values(jf(x)) == want);
  CHECK(detail::tier_counts().interpreted == t0.interpreted + 1);
  // Waiting for the compiler reports its failure instead.
  CHECK_THROWS_WITH(jit(f, {.backend = Backend::cpu, .wait_for_compile = true})(x), Contains("the compiler failed"));
}

TEST_CASE("jit tiers: a failed background compile leaves the executable on the interpreter", "[jit][cpu][tiers]") {
  const std::filesystem::path dir = std::string(GRAFT_TEST_TMPDIR) + "/failing_cxx_" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  const std::filesystem::path cxx = dir / "cxx";
  {
    std::ofstream script(cxx);
    script << "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'failing-cxx 1.0'; exit 0; fi\n"
              "echo 'error: this compiler always fails' >&2\nexit 1\n";
  }
  std::filesystem::permissions(cxx, std::filesystem::perms::owner_all);
  int status = 0;
  std::string out = graft::test::run_self("GRAFT_CXX='" + cxx.string() + "' GRAFT_CACHE_DIR='" + (dir / "cache").string() + "'",
                                          "[.child_jit_failing_compiler]", &status);
  INFO(out);
  CHECK(status == 0);
  CHECK_THAT(out, Contains("All tests passed"));
  CHECK_THAT(out, Contains("the cpu module failed to compile; this executable keeps running on the interpreter"));
  CHECK_THAT(out, Contains("this compiler always fails"));
  std::filesystem::remove_all(dir);
}

namespace {
// 31 distinct kernels (two modules): a compile that takes a while.
Array thirty_kernels(const Array& a) {
  return thirty_chains(a, [](const Array& x) { return tanh(x); });
}
}  // namespace

// A short program: one call, then exit while the background compile runs.
TEST_CASE("jit tiers (child): a short run exits while its module compiles", "[.child_short_run]") {
  REQUIRE(cg::cpu_compiler_available());
  auto jf = jit(thirty_kernels, {.backend = Backend::cpu});
  Array v = randn({2, 40}, 12);
  CHECK(values(jf(v)) == values(jit(thirty_kernels, {.backend = Backend::interpreter})(v)));
  CHECK(detail::tier_counts().compiled == 0);
  // Wait until the compilers have started (their sources are written just before), then exit before they finish.
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(cg::cpu_cache_dir());
  auto started = [&] {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.path().filename().string().find(".tmp.") != std::string::npos && e.path().extension() == ".cpp") return true;
    return false;
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!started()) {
    REQUIRE(std::chrono::steady_clock::now() < deadline);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(cg::loaded_module_count() == 0);  // not finished: the exit comes first
}

// Its second run: the modules are on disk, so the first call runs compiled code.
TEST_CASE("jit tiers (child): the second run is compiled from its first call", "[.child_second_run]") {
  auto jf = jit(thirty_kernels, {.backend = Backend::cpu});
  Array v = randn({2, 40}, 12);
  const cg::CompileStats s0 = cg::compile_stats();
  CHECK(values(jf(v)) == values(jit(thirty_kernels, {.backend = Backend::interpreter})(v)));
  CHECK(detail::tier_counts().compiled == 1);
  CHECK(detail::tier_counts().interpreted == 0);
  CHECK(cg::compile_stats().compiles == s0.compiles);
  CHECK(cg::compile_stats().disk_hits == s0.disk_hits + 2);
}

TEST_CASE("jit tiers: a compile a short run started lands in the cache after it exits", "[jit][cpu][tiers]") {
  REQUIRE(cg::cpu_compiler_available());
  namespace fs = std::filesystem;
  const fs::path dir = std::string(GRAFT_TEST_TMPDIR) + "/short_run_" + std::to_string(getpid());
  fs::remove_all(dir);
  const std::string env = "GRAFT_CACHE_DIR='" + dir.string() + "'";
  const auto t0 = std::chrono::steady_clock::now();
  graft::test::check_child_passes(env, "[.child_short_run]");
  const double exit_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // The exit did not wait for the compilers (they take seconds; the child's own work a fraction of that) ...
  INFO("the child took " << exit_s << " s");
  // ... which finish after it and move both modules and their keys into the cache.
  auto landed = [&] {
    int so = 0, key = 0;
    std::error_code ec;
    for (const auto& e : fs::recursive_directory_iterator(dir, ec)) {
      const std::string name = e.path().filename().string();
      if (name.find(".tmp.") != std::string::npos) continue;
      so += e.path().extension() == ".so";
      key += e.path().extension() == ".key";
    }
    return so >= 2 && key >= 2;
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (!landed()) {
    REQUIRE(std::chrono::steady_clock::now() < deadline);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  graft::test::check_child_passes(env, "[.child_second_run]");
  fs::remove_all(dir);
}
