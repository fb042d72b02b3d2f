// Devices and their memory: virtual CPU devices, exact statistics, buffers
// freed at last use, provenance of every buffer (eager and jit), the
// out-of-memory report, and profiles read back by `go tool pprof`.
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "graft/graft.h"
#include "runtime/bfc_allocator.h"
#include "runtime/device.h"
#include "runtime/platform_allocator.h"
#include "support/shell.h"

using namespace graft;
using Catch::Matchers::Contains;

namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

// A device of the test's own that eager ops and evaluate allocate on while it
// is alive (declare it before the arrays it will hold, so they die first).
struct TestDevice {
  runtime::Device device;
  runtime::DeviceScope scope;
  explicit TestDevice(std::unique_ptr<runtime::Allocator> allocator)
      : device("cpu", 90, std::move(allocator)), scope(device) {}
  runtime::AllocatorStats stats() const { return device.memory_stats(); }
};

std::string file_line(int line) { return std::filesystem::path(__FILE__).filename().string() + ":" + std::to_string(line); }

bool has_site(const runtime::Device& d, int64_t bytes, int line, const std::string& op) {
  for (const runtime::LiveAllocation& a : d.live_allocations())
    if (a.bytes == bytes && a.site->line == line && a.site->op == op && a.site->file == __FILE__) return true;
  return false;
}

}  // namespace

TEST_CASE("devices: cpu devices, default device, where arrays live", "[memory][devices]") {
  std::vector<Device> all = devices();
  REQUIRE(static_cast<int>(all.size()) == runtime::device_settings().cpu_devices);
  CHECK(all[0] == default_device());
  CHECK(default_device().kind() == "cpu");
  CHECK(default_device().id() == 0);
  Array x = ones({3});
  CHECK(x.device() == default_device());
  CHECK(device_put(x, default_device()).unsafe_buffer_pointer() == x.unsafe_buffer_pointer());
  CHECK(devices("cpu") == all);
  CHECK_THROWS_WITH(devices("tpu"), Contains("unknown device kind \"tpu\""));
  CHECK_THROWS_WITH(Device("tpu", 0).memory_stats(), Contains("device tpu:0 does not exist"));
  if (devices("cuda").empty())  // no driver here (the cuda-labelled tests run an emulated one)
    CHECK_THROWS_WITH(Device("cuda", 0).memory_stats(),
                      Contains("device cuda:0 does not exist: there are no cuda devices") && Contains("driver"));
  CHECK_THROWS_AS(Device("cpu", 9999).memory_stats(), Error);
  CHECK_THROWS_AS(device_put(x, Device("cpu", 9999)), Error);
}

// Run in a child process with GRAFT_CPU_DEVICES=3 (settings are read once per process).
TEST_CASE("devices (child): three virtual devices, each with its own allocator", "[.child_devices]") {
  REQUIRE(devices().size() == 3);
  Device d2 = devices()[2];
  const MemoryStats before0 = default_device().memory_stats(), before2 = d2.memory_stats();
  Array x = arange(1000, f32);  // 4000 bytes on cpu:0
  Array y = device_put(x, d2);
  CHECK(y.device() == d2);
  CHECK(y.to_vector<float>() == x.to_vector<float>());
  CHECK(d2.memory_stats().bytes_in_use - before2.bytes_in_use == 4032);
  Array z = y * 2.0f;  // eager ops run where their operands live
  CHECK(z.device() == d2);
  CHECK(z.to_vector<float>()[999] == 1998.0f);
  CHECK(d2.memory_stats().bytes_in_use - before2.bytes_in_use == 2 * 4032);
  CHECK(default_device().memory_stats().bytes_in_use - before0.bytes_in_use == 4032);
  // Each device has its share of the limit.
  CHECK(d2.memory_stats().bytes_limit == runtime::device_settings().bytes_limit());
}

TEST_CASE("devices (child): a malformed setting is a clear error", "[.child_bad_setting]") {
  CHECK_THROWS_WITH(devices(), Contains("GRAFT_CPU_DEVICES=\"many\" is not valid") && Contains("1 to 256"));
}

TEST_CASE("devices (child): the platform allocator and preallocation are chosen by the environment", "[.child_platform]") {
  CHECK(std::string(runtime::devices()[0]->allocator().name()) == "platform");
  CHECK(default_device().memory_stats().bytes_limit == runtime::device_settings().bytes_limit());
}

TEST_CASE("devices (child): a preallocated bfc reserves its whole limit at first use", "[.child_prealloc]") {
  MemoryStats s = default_device().memory_stats();
  CHECK(std::string(runtime::devices()[0]->allocator().name()) == "bfc");
  CHECK(s.bytes_reserved == s.bytes_limit);
  CHECK(s.bytes_limit == runtime::device_settings().bytes_limit());
  CHECK(s.bytes_limit < 64 * kMiB);  // GRAFT_MEM_FRACTION is tiny in this child
}

TEST_CASE("devices: GRAFT_* settings are read from the environment", "[memory][devices]") {
  int status = 0;
  std::string out = graft::test::run_self("GRAFT_CPU_DEVICES=3", "[.child_devices]", &status);
  INFO(out);
  CHECK(status == 0);
  out = graft::test::run_self("GRAFT_CPU_DEVICES=many", "[.child_bad_setting]", &status);
  INFO(out);
  CHECK(status == 0);
  out = graft::test::run_self("GRAFT_ALLOCATOR=platform", "[.child_platform]", &status);
  INFO(out);
  CHECK(status == 0);
  out = graft::test::run_self("GRAFT_ALLOCATOR=bfc GRAFT_PREALLOCATE=true GRAFT_MEM_FRACTION=0.0001",
                              "[.child_prealloc]", &status);
  INFO(out);
  CHECK(status == 0);
}

TEST_CASE("memory_stats: exact to the byte", "[memory][devices]") {
  const Device d = default_device();
  const MemoryStats before = d.memory_stats();
  {
    Array a = arange(1000, f32);  // 4000 bytes -> one 4032-byte block (64-byte multiples)
    MemoryStats s = d.memory_stats();
    CHECK(s.bytes_in_use - before.bytes_in_use == 4032);
    CHECK(s.largest_alloc_size >= 4000);
    CHECK(s.bytes_limit == runtime::device_settings().bytes_limit());
    CHECK(s.bytes_reserved >= s.bytes_in_use);
    CHECK(s.largest_free_block_bytes <= s.bytes_reserved - s.bytes_in_use);
    d.reset_peak_memory_stats();
    Array b = exp(a);
    Array c = sin(b);
    s = d.memory_stats();
    CHECK(s.bytes_in_use - before.bytes_in_use == 3 * 4032);
    CHECK(s.peak_bytes_in_use == s.bytes_in_use);
  }
  CHECK(d.memory_stats().bytes_in_use == before.bytes_in_use);

  // On a device of the test's own, every count is exact.
  TestDevice t(std::make_unique<runtime::BfcAllocator>(8 * kMiB, true));
  {
    Array a = arange(1000, f32);
    runtime::AllocatorStats s = t.stats();
    CHECK(s.bytes_in_use == 4032);
    CHECK(s.num_allocs == 1);
    CHECK(s.largest_alloc_size == 4000);
    CHECK(s.bytes_reserved == 8 * kMiB);
    CHECK(s.largest_free_block_bytes == 8 * kMiB - 4032);
  }
  CHECK(t.stats().bytes_in_use == 0);
  CHECK(t.stats().peak_bytes_in_use == 4032);
}

TEST_CASE("memory: the interpreter frees intermediates at their last use", "[memory][devices]") {
  // A chain of 24 unary elementwise ops on 1 MiB arrays: walking the graph
  // holds the input, the value being read and the value being written, never 24.
  // (A binary op with a C++ scalar adds a third: the scalar broadcast to the
  // array's shape, which the interpreter materialises and jit fuses away.)
  auto chain = [](const Array& x) {
    Array y = x;
    for (int i = 0; i < 12; ++i) y = tanh(sin(y));
    return y;
  };
  const int64_t n = 1 << 18;  // f32: 1 MiB
  TestDevice t(std::make_unique<runtime::PlatformAllocator>());
  Array x = ones({n});
  Graph g = make_graph(chain)(x);
  REQUIRE(g.num_nodes() >= 24);
  t.device.allocator().reset_peak();
  const int64_t base = t.stats().bytes_in_use;
  std::vector<Array> out = evaluate(g, {x});
  const int64_t peak = t.stats().peak_bytes_in_use - base;
  CHECK(peak == 2 * 4 * n);
  CHECK(t.stats().bytes_in_use - base == 4 * n);  // only the result is left

  // jit fuses the chain: one kernel writes the result directly.
  auto fast = jit(chain, JitOptions{.backend = Backend::interpreter});
  fast(x);  // compiles; its constants may stay with the executable
  t.device.allocator().reset_peak();
  const int64_t base2 = t.stats().bytes_in_use;
  Array y = fast(x);
  CHECK(t.stats().peak_bytes_in_use - base2 == 4 * n);
  CHECK(y.to_vector<float>() == out[0].to_vector<float>());
}

TEST_CASE("provenance: buffers record the op and the user's line, eager and inside jit", "[memory][provenance]") {
  TestDevice t(std::make_unique<runtime::PlatformAllocator>());
  Array x = arange(256, f32); const int line_x = __LINE__;
  Array y = x * 3.0f; const int line_y = __LINE__;
  bool found_x = false;
  for (const runtime::LiveAllocation& a : t.device.live_allocations())
    found_x = found_x || (a.bytes == 1024 && a.site->line == line_x && !a.site->op.empty());
  CHECK(found_x);
  CHECK(has_site(t.device, 1024, line_y, "mul"));
  {
    named_scope scope("layer1");
    Array z = exp(x); const int line_z = __LINE__;
    bool found = false;
    for (const runtime::LiveAllocation& a : t.device.live_allocations())
      found = found || (a.site->line == line_z && a.site->scope == "layer1" && a.site->op == "exp");
    CHECK(found);
  }
  // Inside a jit executable, the output is attributed to the traced node's line.
  auto f = jit([](const Array& a) {
    Array b = a * a;
    return b + 1.0f;  // line_f below
  }, JitOptions{.backend = Backend::interpreter}); const int line_f = __LINE__ - 1;
  Array r = f(x);
  CHECK(has_site(t.device, 1024, line_f, "fusion"));

  // An executable keeps the arrays it closed over as constants: kind "executable".
  Array table = arange(1000, f32);
  auto g = jit([&](const Array& v) { return v + table; }, JitOptions{.backend = Backend::interpreter});
  const int line_g = __LINE__ - 1;
  Array s = g(table);
  bool held = false;
  for (const runtime::LiveAllocation& a : t.device.live_allocations())
    held = held || (std::string(a.kind) == "executable" && a.bytes == 4000 && a.site->op == "jit" &&
                    a.site->line == line_g);
  CHECK(held);
}

TEST_CASE("memory: an out-of-memory error explains itself", "[memory][oom]") {
  TestDevice t(std::make_unique<runtime::BfcAllocator>(1 * kMiB, true));
  Array a = ones({100000}); const int line_a = __LINE__;  // 400000 bytes
  Array b = exp(a); const int line_b = __LINE__;
  std::string msg;
  try {
    Array c = b + a; const int line_c = __LINE__;
    (void)c;
    FAIL("no OutOfMemoryError " << line_c);
  } catch (const OutOfMemoryError& e) {
    msg = e.what();
  }
  INFO(msg);
  CHECK_THAT(msg, Contains("cpu:90: bfc allocator: out of memory: requested 400000 bytes"));
  CHECK(t.stats().bytes_in_use == 800000);
  CHECK_THAT(msg, Contains("in use 800000 bytes"));
  CHECK_THAT(msg, Contains("limit 1048576 bytes"));
  CHECK_THAT(msg, Contains("largest free block " + std::to_string(t.stats().largest_free_block_bytes) + " bytes"));
  CHECK_THAT(msg, Contains("The request came from add at ") && Contains(file_line(line_b + 3)));
  CHECK_THAT(msg, Contains("Largest live buffers on cpu:90 (2 in all)"));
  CHECK_THAT(msg, Contains("(400000 bytes) buffer, made by full at ") &&
                      Contains(file_line(line_a)));
  CHECK_THAT(msg, Contains("buffer, made by exp at ") && Contains(file_line(line_b)));

  // Inside a jit executable the request names the traced line.
  auto f = jit([](const Array& v) { return v * 5.0f; }, JitOptions{.backend = Backend::interpreter});
  const int line_f = __LINE__ - 1;
  CHECK_THROWS_WITH(f(b), Contains("The request came from fusion at ") && Contains(file_line(line_f)));
}

TEST_CASE("profiles: go tool pprof names the lines that hold memory", "[memory][pprof]") {
  if (!graft::test::have_go()) {
    WARN("skipped: `go` is not on PATH (install golang-go for go tool pprof)");
    return;
  }
  namespace fs = std::filesystem;
  fs::path dir = fs::path(GRAFT_TEST_TMPDIR) / "device_profile";
  const std::string pprof = graft::test::go_pprof_command(dir);
  const std::string base = (dir / "base.pb.gz").string(), grown = (dir / "grown.pb.gz").string();
  auto run = [&](const std::string& args) {
    int status = 0;
    std::string out = graft::test::run(pprof + args, &status);
    INFO("go tool pprof " << args << "\n" << out);
    REQUIRE(status == 0);
    return out;
  };

  Array kept = ones({1 << 16}) * 2.0f; const int line_kept = __LINE__;  // 256 KiB
  std::vector<Array> leak;
  auto step = [&](int k) {
    for (int i = 0; i < k; ++i) leak.push_back(kept + float(i));  // line_leak below
  };
  const int line_leak = __LINE__ - 2;
  step(2);
  profiler::save_device_memory_profile(base);
  step(3);
  profiler::save_device_memory_profile(grown, default_device());

  const std::string me = fs::path(__FILE__).filename().string();
  std::string top = run("-top -lines -unit=B -focus=" + me + " '" + base + "'");
  CHECK_THAT(top, Contains(file_line(line_kept)) && Contains("262144B"));
  CHECK_THAT(top, Contains(file_line(line_leak)) && Contains("524288B"));  // two arrays

  std::string traces = run("-traces -unit=B -focus=" + me + " '" + grown + "'");
  CHECK_THAT(traces, Contains("kind:  buffer") && Contains("device:  cpu:0") && Contains("op:  add"));

  std::string diff = run("-top -lines -unit=B -diff_base='" + base + "' '" + grown + "'");
  INFO(diff);
  CHECK_THAT(diff, Contains("786432B") && Contains(file_line(line_leak)));  // five arrays now, from two
  CHECK_THAT(diff, !Contains(file_line(line_kept)));
}
