// jit's cpu backend: fused kernels compiled to C++ compute what the
// interpreter computes, and the compile cache behaves (no re-trace for a
// known signature, one compile for a new shape, none for a new static
// scalar, none in a second process).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <string>

#include "codegen/cpu/compiler.h"
#include "graft/graft.h"
#include "support/arrays.h"
#include "support/scoped_env.h"
#include "support/shell.h"

using namespace graft;
using Catch::Matchers::Contains;
namespace cg = graft::codegen::cpu;
using graft::test::randn;
using graft::test::values;

namespace {

// The function of the cache tests: its kernel's source depends on x's shape only.
Array scaled_chain(const Array& x, double scale) { return tanh(x * scale + 1.0f) * exp(-x); }

}  // namespace

TEST_CASE("jit cpu: compiled kernels equal the interpreter", "[jit][cpu]") {
  REQUIRE(cg::cpu_compiler_available());
  auto cpu = JitOptions{.backend = Backend::cpu, .wait_for_compile = true};
  auto interp = JitOptions{.backend = Backend::interpreter};
  Array x = randn({64, 33}, 1), y = randn({33}, 2), z = randn({64, 1}, 3);

  // An 8-op elementwise chain with broadcasts: bit for bit.
  auto chain = [](const Array& a, const Array& b, const Array& c) {
    return sqrt(abs(sin(a * b + c) - cos(a)) + 1.0f) * logistic(a) / (b * b + 2.0f);
  };
  CHECK(values(jit(chain, cpu)(x, y, z)) == values(jit(chain, interp)(x, y, z)));
  CHECK(values(jit(chain, cpu)(x, y, z)) == values(chain(x, y, z)));

  // A trailing reduction over the leading axis (the interpreter's order: exact) and two outputs.
  auto reduce = [](const Array& a, const Array& b) {
    Array e = exp(a * 0.1f) + b;
    return std::make_pair(e, sum(e, {0}));
  };
  auto [e1, s1] = jit(reduce, cpu)(x, y);
  auto [e2, s2] = jit(reduce, interp)(x, y);
  CHECK(values(e1) == values(e2));
  CHECK(values(s1) == values(s2));

  // A row sum adds in another fixed order: equal within rounding.
  auto rows = [](const Array& a) { return sum(square(a), {1}); };
  std::vector<double> r1 = values(jit(rows, cpu)(x)), r2 = values(rows(x));
  REQUIRE(r1.size() == r2.size());
  for (size_t i = 0; i < r1.size(); ++i) CHECK(r1[i] == Approx(r2[i]).epsilon(1e-5));

  // What cannot be fused (a dot) runs in the interpreter between compiled kernels.
  auto mlp = [](const Array& a, const Array& w) { return sum(tanh(matmul(a, w) * 0.5f + 1.0f)); };
  Array w = randn({33, 8}, 4);
  CHECK(jit(mlp, cpu)(x, w).item<float>() == Approx(mlp(x, w).item<float>()).epsilon(1e-5));

  // The gradient's graph too.
  auto loss = [](const Array& a, const Array& b) { return sum(square(tanh(a * b) - 0.5f)); };
  auto g = grad(loss);
  std::vector<double> g1 = values(jit(g, cpu)(x, y)), g2 = values(g(x, y));
  for (size_t i = 0; i < g1.size(); ++i) CHECK(g1[i] == Approx(g2[i]).epsilon(1e-5).margin(1e-6));
}

TEST_CASE("jit cpu: as_text shows the kernels and their C++", "[jit][cpu]") {
  auto f = [](const Array& a) { return exp(a) * 2.0f + 1.0f; };
  std::string text = jit(f, JitOptions{.backend = Backend::cpu}).lower(ones({16})).compile().as_text();
  CHECK_THAT(text, Contains("backend: cpu (1 fused kernels compiled to C++, 1 distinct, in 1 module)"));
  CHECK_THAT(text, Contains("kernel 0: fusion of 5 ops (exp, broadcast_in_dim, mul, broadcast_in_dim, add)"));
  CHECK_THAT(text, Contains("generated C++:") && Contains("graft_kernel_0"));
  // Constants are parameters: 2 and 1 do not appear as literals in the source.
  CHECK(text.find("2.0f") == std::string::npos);
}

namespace {
// A fresh cache directory per run, so that the first compile is real.
std::string fresh_cache_dir() {
  return std::string(GRAFT_TEST_TMPDIR) + "/jit_cache_" + std::to_string(getpid()) + "_" +
         std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
}
}  // namespace

// Run in a child process sharing the parent's GRAFT_CACHE_DIR: a new process finds the module on disk.
TEST_CASE("jit cpu (child): a second process compiles nothing", "[.child_jit_disk_cache]") {
  cg::CompileStats s0 = cg::compile_stats();
  auto jf = jit(scaled_chain, JitOptions{.backend = Backend::cpu, .wait_for_compile = true});
  Array x = astype(arange(100), f32);
  CHECK(values(jf(x, 1.5)) == values(scaled_chain(x, 1.5)));
  cg::CompileStats s1 = cg::compile_stats();
  CHECK(s1.compiles == s0.compiles);
  CHECK(s1.disk_hits == s0.disk_hits + 1);
}

TEST_CASE("jit cpu: the compile cache", "[jit][cpu][cache]") {
  const std::string dir = fresh_cache_dir();
  const test::ScopedEnv cache_dir("GRAFT_CACHE_DIR", dir);
  int traces = 0;
  auto jf = jit([&traces](const Array& x, double scale) {
    ++traces;
    return scaled_chain(x, scale);
  }, JitOptions{.backend = Backend::cpu, .wait_for_compile = true});
  Array x = astype(arange(100), f32);

  cg::CompileStats s0 = cg::compile_stats();
  CHECK(values(jf(x, 1.5)) == values(scaled_chain(x, 1.5)));
  cg::CompileStats s1 = cg::compile_stats();
  CHECK(traces == 1);
  CHECK(s1.compiles == s0.compiles + 1);

  // Same shapes: no trace, no compile.
  jf(x + 1.0f, 1.5);
  CHECK(traces == 1);
  CHECK(cg::compile_stats().compiles == s1.compiles);

  // A new static scalar: a new trace, but the same kernel source (the scalar is a parameter).
  CHECK(values(jf(x, 2.5)) == values(scaled_chain(x, 2.5)));
  cg::CompileStats s2 = cg::compile_stats();
  CHECK(traces == 2);
  CHECK(s2.compiles == s1.compiles);
  CHECK(s2.memory_hits == s1.memory_hits + 1);

  // A new shape: one trace, but no compile: an elementwise kernel takes its
  // element count at run time, so its source is the same for every size.
  Array x2 = astype(arange(37), f32);
  CHECK(values(jf(x2, 1.5)) == values(scaled_chain(x2, 1.5)));
  CHECK(traces == 3);
  CHECK(cg::compile_stats().compiles == s2.compiles);
  CHECK(jf.cache_size() == 3);

  // A second process finds the first shape's module on disk.
  int status = 0;
  std::string out = graft::test::run_self("GRAFT_CACHE_DIR='" + dir + "'", "[.child_jit_disk_cache]", &status);
  INFO(out);
  CHECK(status == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("jit cpu: a module is unloaded with the last executable using it, and loads again from disk",
          "[jit][cpu][codegen]") {
  if (!cg::cpu_compiler_available()) return;
  // A process that jit-compiles many functions must not keep every module
  // mapped: one differential run of 30000 programs ran out of mappings.
  const Array x = array({0.25f, -0.5f, 1.5f});
  // 8 distinct kernels: op chains chosen by the bits of k.
  auto chain = [](int k) {
    return [k](const Array& v) {
      Array y = v * 1.5f;
      y = (k & 1) ? sin(y) : cos(y);
      y = (k & 2) ? exp(y) : tanh(y);
      y = (k & 4) ? y * y : y + 2.0f;
      return y;
    };
  };
  const int64_t before = cg::loaded_module_count();
  std::vector<std::vector<float>> first;
  {
    std::vector<std::function<Array(const Array&)>> live;
    for (int k = 0; k < 8; ++k) {
      auto f = jit(chain(k), JitOptions{.backend = Backend::cpu, .wait_for_compile = true});
      first.push_back(f(x).to_vector<float>());
      CHECK(first.back() == chain(k)(x).to_vector<float>());  // compiled equals eager, bit for bit
      live.push_back(f);
    }
    CHECK(cg::loaded_module_count() >= before + 8);
  }
  CHECK(cg::loaded_module_count() == before);  // every executable gone: every module unloaded
  // The same functions again: loaded from the disk cache (or the compiler), same results.
  for (int k = 0; k < 8; ++k) {
    auto f = jit(chain(k), JitOptions{.backend = Backend::cpu, .wait_for_compile = true});
    CHECK(f(x).to_vector<float>() == first[static_cast<size_t>(k)]);
  }
  CHECK(cg::loaded_module_count() == before);
}
