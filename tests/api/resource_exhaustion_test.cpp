// Running out: device memory inside jit, eager ops and pmap gives
// OutOfMemoryError, frees what the failed call took, and the next call works;
// an unusable kernel cache directory, or a full disk under it, degrades to
// caching in the process alone, with one warning.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

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

// Run in a child process with two CPU devices of about 2 MiB each.
TEST_CASE("child: pmap out of device memory", "[.pmap_oom_child]") {
  REQUIRE(devices().size() == 2);
  for (const Device& d : devices()) {
    INFO(d.memory_stats().bytes_limit);
    REQUIRE(d.memory_stats().bytes_limit > static_cast<int64_t>(kMiB));
    REQUIRE(d.memory_stats().bytes_limit < static_cast<int64_t>(4 * kMiB));
  }
  auto f = pmap(heavy);
  const Array small = ones({2, 1000}), big = ones({2, 100000});  // big: 400 KB per replica, heavy needs 2.4 MB more
  auto in_use = [] {
    std::vector<int64_t> v;
    for (const Device& d : devices()) v.push_back(d.memory_stats().bytes_in_use);
    return v;
  };
  CHECK(f(small).to_vector<float>()[0] == Approx(2.0f * std::exp(1.0f)));
  const std::vector<int64_t> before = in_use();
  CHECK_THROWS_AS(f(big), OutOfMemoryError);
  CHECK(in_use() == before);
  const Array y = f(small);
  CHECK(y.shape() == Shape{2, 5000});
  CHECK(y.to_vector<float>()[2 * 5000 - 1] == 2.0f);
  CHECK_THROWS_AS(f(big), OutOfMemoryError);  // and again: the replicas are not left broken
  std::printf("child: ok\n");
}

TEST_CASE("out of device memory inside pmap: an OutOfMemoryError, nothing held, the next call works",
          "[resources][oom][pmap]") {
  // Devices of about 2 MiB: the fraction of this machine's memory that gives them (as graft reads it).
  const double physical = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE));
  const double fraction = 2.0 * 2 * kMiB / physical;
  test::check_child_passes("GRAFT_CPU_DEVICES=2 GRAFT_MEM_FRACTION=" + std::to_string(fraction), "[.pmap_oom_child]");
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

// A full disk: the cache directory on a 16 KiB tmpfs, mounted in a private
// mount namespace (unshare maps the caller to root there, so no privilege is
// needed where user namespaces are allowed). The generated source or the
// compiled module does not fit; the kernels still run, with one warning.
TEST_CASE("a full kernel cache disk degrades to no caching, with one warning", "[resources][cache]") {
  const std::filesystem::path dir = std::filesystem::path(GRAFT_TEST_TMPDIR) / "cache_full_disk";
  std::filesystem::create_directories(dir);
  int status = 0;
  test::run("unshare --user --map-root-user --mount true", &status);
  if (status != 0) {
    WARN("unshare cannot make a mount namespace here: the full-disk case is not run");
    return;
  }
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::string out = test::run(
      "unshare --user --map-root-user --mount sh -c 'mount -t tmpfs -o size=16k tmpfs \"$0\" && df -k \"$0\" && "
      "GRAFT_CACHE_DIR=\"$0/cache\" \"$1\" \"[.cache_unusable_child]\"' '" +
          dir.string() + "' '" + self + "'",
      &status);
  INFO(out);
  CHECK(status == 0);
  CHECK(count(out, "child: ok") == 1);
  CHECK(count(out, "graft: warning: the kernel cache") == 1);
  const bool says_why = count(out, "no space left") == 1 || count(out, "cannot write") == 1;
  CHECK(says_why);
}
