// Running out: device memory inside jit and eager ops gives OutOfMemoryError,
// frees what the failed call took, and the next call works; an unusable
// kernel cache directory degrades to caching in the process alone, with one
// warning.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "api/jit_tiers.h"
#include "graft/graft.h"
#include "runtime/bfc_allocator.h"
#include "runtime/device.h"
#include "support/shell.h"

using namespace graft;

namespace {

constexpr size_t kMiB = size_t{1} << 20;

// A device of 1 MiB made the default for the test's scope.
struct SmallDevice {
  runtime::Device device{"cpu", 91, std::make_unique<runtime::BfcAllocator>(kMiB, true)};
  runtime::DeviceScope scope{device};
  int64_t in_use() const { return device.memory_stats().bytes_in_use; }
};

// Needs five 400 KB temporaries alive at once for 100k elements; 4 KB for 1k.
Array heavy(const Array& x) {
  Array a = exp(x), b = sin(x), c = cos(x), d = a * b;
  return concatenate({a, b, c, d, x}) * 2.0f;
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("out of device memory in eager ops: an OutOfMemoryError, nothing held, the next call works",
          "[resources][oom]") {
  SmallDevice d;
  const Array big = ones({100000});  // 400 KB
  const int64_t before = d.in_use();
  CHECK_THROWS_AS(heavy(big), OutOfMemoryError);
  CHECK(d.in_use() == before);
  const Array small = ones({1000});
  CHECK(heavy(small).shape() == Shape{5000});
  CHECK(heavy(small).to_vector<float>()[4999] == 2.0f);
}

TEST_CASE("out of device memory inside jit: an OutOfMemoryError, nothing held, the next call works",
          "[resources][oom]") {
  for (Backend backend : {Backend::interpreter, Backend::cpu}) {
    INFO((backend == Backend::cpu ? "cpu" : "interpreter"));
    SmallDevice d;
    auto f = jit(heavy, JitOptions{.backend = backend, .wait_for_compile = true});
    const Array small = ones({1000});
    CHECK(f(small).to_vector<float>()[0] == Approx(2.0f * std::exp(1.0f)));
    const Array big = ones({100000});
    const int64_t before = d.in_use();
    CHECK_THROWS_AS(f(big), OutOfMemoryError);
    CHECK(d.in_use() == before);
    CHECK(f(small).to_vector<float>()[4999] == 2.0f);
    CHECK_THROWS_AS(f(big), OutOfMemoryError);  // and again: the executable is not left broken
    CHECK(d.in_use() == before);
  }
}

// Run in a child process whose GRAFT_CACHE_DIR cannot be a directory.
TEST_CASE("child: two modules compiled with an unusable cache directory", "[.cache_unusable_child]") {
  for (float k : {1.25f, 2.5f}) {
    auto f = jit([k](const Array& x) { return exp(x) * k + 0.0625f; },
                 JitOptions{.backend = Backend::cpu, .wait_for_compile = true});
    const int64_t compiled = detail::tier_counts().compiled;
    CHECK(f(ones({8})).to_vector<float>()[7] == Approx(std::exp(1.0f) * k + 0.0625f));
    CHECK(detail::tier_counts().compiled == compiled + 1);  // ran the generated kernels
  }
  std::printf("child: ok\n");
}

TEST_CASE("an unusable kernel cache directory degrades to no caching, with one warning", "[resources][cache]") {
  const std::filesystem::path dir = std::filesystem::path(GRAFT_TEST_TMPDIR) / "cache_is_a_file";
  std::filesystem::create_directories(dir);
  const std::filesystem::path file = dir / "not_a_directory";
  std::ofstream(file) << "a file where the cache directory would go\n";
  int status = 0;
  const std::string out =
      test::run_self("GRAFT_CACHE_DIR='" + (file / "cache").string() + "'", "[.cache_unusable_child]", &status);
  INFO(out);
  CHECK(status == 0);
  CHECK(count(out, "child: ok") == 1);
  CHECK(count(out, "graft: warning: the kernel cache") == 1);
  CHECK(count(out, "is unusable") == 1);
}
