// pmap across processes (graft::distributed over MPI): the child cases
// ([.mpi2], [.mpi2_*]) run in each of 2 processes started by mpirun, with 1
// and 2 local devices each; their results must equal the single-process
// answers (the same reduce kernels over the same stacked values, so psum's
// bits match exactly), and failures must end the run within seconds.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <thread>

#include "graft/graft.h"
#include "runtime/processes.h"
#include "support/arrays.h"
#include "support/shell.h"

using namespace graft;

namespace {

constexpr int kColumns = 3;

// Every replica's row of the global [replicas, kColumns] input, the same in every process.
Array global_input(int replicas) {
  std::vector<float> v;
  for (int g = 0; g < replicas; ++g)
    for (int k = 0; k < kColumns; ++k) v.push_back(3.0f * std::sin(0.37f * static_cast<float>(g * 5 + k)) + 0.001f * g);
  return array<float>(v, {replicas, kColumns});
}

// This process's rows of a global array: one per local device.
Array local_rows(const Array& global) {
  const int local = static_cast<int>(distributed::local_devices().size());
  const int first = distributed::process_index() * local;
  return slice(global, {first, 0}, {first + local, global.shape()[1]});
}

void check_equal(const Array& got, const Array& want) {
  REQUIRE(got.shape() == want.shape());
  CHECK(got.to_vector<float>() == want.to_vector<float>());
}

using test::check_close;

// Runs this binary's `spec` cases under `mpirun -np 2` with `env`.
std::string mpirun(const std::string& env, const std::string& spec, int* status, double* seconds) {
  const auto start = std::chrono::steady_clock::now();
  std::string out = test::run(env +
                                  // Under ASan: Open MPI's own leaks suppressed, which needs whole stacks.
                                  " ASAN_OPTIONS=\"$ASAN_OPTIONS:fast_unwind_on_malloc=0\""
                                  " LSAN_OPTIONS=suppressions=" GRAFT_LSAN_MPI ":print_suppressions=0"
                                  " OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
                                  " OMPI_MCA_rmaps_base_oversubscribe=1 " GRAFT_MPIEXEC " --timeout 120 -np 2 '" +
                                  std::filesystem::read_symlink("/proc/self/exe").string() + "' '" + spec + "'",
                              status);
  *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

// Runs `spec` under mpirun expecting it to fail: every process must have
// ended, non-zero, within 30 s. Returns the output.
std::string mpirun_failing(const std::string& env, const std::string& spec) {
  int status = 0;
  double seconds = 0;
  std::string out = mpirun(env, spec, &status, &seconds);
  INFO(out);
  CHECK(status != 0);
  CHECK(seconds < 30);
  return out;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("distributed: one process without a launcher", "[distributed]") {
  distributed::initialize();
  distributed::initialize();  // a second call does nothing
  CHECK(distributed::is_initialized());
  CHECK(distributed::process_count() == 1);
  CHECK(distributed::process_index() == 0);
  CHECK(distributed::local_devices() == devices());
  CHECK(devices()[0].process_index() == 0);
  CHECK_THROWS_WITH(distributed::initialize({.process_count = 2}),
                    Catch::Contains("process_count 2 was asked for but 1 process(es) were started"));
}

#ifdef GRAFT_MPIEXEC

TEST_CASE("distributed: pmap over 2 processes x 1 and 2 devices equals single-process pmap", "[distributed][mpi]") {
  for (const char* local : {"1", "2"}) {
    INFO("local devices per process: " << local);
    int status = 0;
    double seconds = 0;
    std::string out = mpirun(std::string("GRAFT_CPU_DEVICES=") + local, "[.mpi2]", &status, &seconds);
    INFO(out);
    CHECK(status == 0);
    CHECK(count(out, "All tests passed") == 2);
  }
}

TEST_CASE("distributed: a replica that fails ends every process within seconds", "[distributed][mpi]") {
  const std::string out = mpirun_failing("GRAFT_CPU_DEVICES=1", "[.mpi2_failure]");
  CHECK_THAT(out, Catch::Contains("process 1 of 2: pmap replica 1 on cpu:1 failed") &&
                      Catch::Contains("out of memory"));
}

TEST_CASE("distributed: a collective that never completes times out and names itself", "[distributed][mpi]") {
  const std::string out = mpirun_failing("GRAFT_CPU_DEVICES=1 GRAFT_COLLECTIVE_TIMEOUT=2", "[.mpi2_timeout]");
  CHECK_THAT(out, Catch::Contains("psum f32[3] over axis 'i' did not complete within 2") &&
                      Catch::Contains("GRAFT_COLLECTIVE_TIMEOUT"));
}

#else

TEST_CASE("distributed: built without MPI, a launched process says so", "[distributed]") {
  int status = 0;
  std::string out = test::run_self("OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=1", "[.mpi2]", &status);
  CHECK_THAT(out, Catch::Contains("process 1 of 2 started by an MPI launcher, but graft was built without MPI"));
}

#endif

// ---- the child cases, run in every process

TEST_CASE("mpi2: devices, ids and collectives across processes", "[.mpi2]") {
  distributed::initialize({.process_count = 2});
  const int p = distributed::process_index();
  const int local = static_cast<int>(distributed::local_devices().size());
  const int n = 2 * local;
  REQUIRE(distributed::process_count() == 2);
  REQUIRE(devices().size() == static_cast<size_t>(n));
  for (int i = 0; i < local; ++i) CHECK(distributed::local_devices()[static_cast<size_t>(i)].id() == p * local + i);
  for (const Device& d : devices()) CHECK(d.process_index() == d.id() / local);
  const Device remote = devices()[static_cast<size_t>((1 - p) * local)];
  CHECK_THROWS_WITH(remote.memory_stats(), Catch::Contains("belongs to process " + std::to_string(1 - p)));

  const Array xs = global_input(n);
  const Array mine = local_rows(xs);
  std::vector<std::pair<int, int>> ring;
  for (int g = 0; g < n; ++g) ring.emplace_back(g, (g + 1) % n);
  auto all = [&ring](const Array& v) {
    const Array wide = concatenate(std::vector<Array>(4, v), 0);  // [4 * kColumns]: splits n ways for n = 2, 4
    return std::vector<Array>{psum(v, "i"),
                              pmean(v, "i"),
                              pmax(v, "i"),
                              pmin(v, "i"),
                              all_gather(v, "i"),
                              all_gather(v, "i", 0, true),
                              ppermute(v, "i", ring),
                              ppermute(v, "i", {{0, 1}}),  // the others receive nothing: zeros
                              astype(axis_index("i"), f32),
                              psum_scatter(wide, "i", 0, true),
                              all_to_all(wide, "i", 0, 0, true)};
  };
  std::vector<Array> out = pmap(all, "i")(mine);
  REQUIRE(out[0].shape() == Shape{local, kColumns});  // this process's shards only
  for (int i = 0; i < local; ++i) {
    const int g = p * local + i;
    INFO("replica " << g);
    auto shard = [&](int k) { return out[static_cast<size_t>(k)].addressable_shards()[static_cast<size_t>(i)]; };
    auto row = [&](int r) { return reshape(slice(xs, {r, 0}, {r + 1, kColumns}), {kColumns}); };
    // The same reduce kernel over the same stack as single-process pmap: the same bits.
    check_equal(shard(0), sum(xs, {0}));
    check_equal(shard(1), sum(xs, {0}) / static_cast<float>(n));
    check_equal(shard(2), max(xs, {0}));
    check_equal(shard(3), min(xs, {0}));
    check_equal(shard(4), xs);
    check_equal(shard(5), reshape(xs, {n * kColumns}));
    check_equal(shard(6), row((g + n - 1) % n));
    check_equal(shard(7), g == 1 ? row(0) : zeros({kColumns}));
    check_equal(shard(8), full({}, static_cast<float>(g)));
    // wide = [x_g, x_g, x_g, x_g]; replica g keeps chunk g of the sum / of every replica's wide.
    const Array wides = concatenate(std::vector<Array>(4, xs), 1);  // [n, 4 * kColumns]
    const int64_t chunk = 4 * kColumns / n;
    check_equal(shard(9), slice(sum(wides, {0}), {g * chunk}, {(g + 1) * chunk}));
    check_equal(shard(10), reshape(slice(wides, {0, g * chunk}, {n, (g + 1) * chunk}), {n * chunk}));
  }
}

TEST_CASE("mpi2: data-parallel gradients, jit inside, replicated outputs, explicit devices", "[.mpi2]") {
  distributed::initialize();
  const int p = distributed::process_index();
  const int local = static_cast<int>(distributed::local_devices().size());
  const int n = 2 * local;
  Array w = reshape(sin(arange(6, f32)), {3, 2}) * 0.3f;
  Array xs = reshape(sin(arange(n * 15, f32) * 0.7f), {n, 5, 3});
  Array ys = cos(reshape(arange(n * 10, f32) * 0.3f, {n, 5, 2}));
  auto loss = [](const Array& w, const Array& x, const Array& y) {
    Array e = tanh(matmul(x, w)) - y;
    return mean(e * e);
  };
  auto step = pmap([&](const Array& w, const Array& x, const Array& y) { return pmean(jit(grad(loss))(w, x, y), "i"); },
                   PmapOptions{.axis_name = "i", .in_axes = Axes{none, 0, 0}, .out_axes = none});
  auto mine = [&](const Array& a) { return slice(a, {p * local, 0, 0}, {(p + 1) * local, a.shape()[1], a.shape()[2]}); };
  Array g = step(w, mine(xs), mine(ys));
  REQUIRE(g.shape() == Shape{3, 2});  // out_axes none: once
  check_close(g, grad(loss)(w, reshape(xs, {n * 5, 3}), reshape(ys, {n * 5, 2})));

  // Devices named explicitly, process-major and in reverse within each process.
  std::vector<Device> order;
  for (int q = 0; q < 2; ++q)
    for (int i = local - 1; i >= 0; --i) order.emplace_back("cpu", q * local + i);
  auto where = pmap([](const Array& v) { return v + astype(axis_index("i"), f32); },
                    PmapOptions{.axis_name = "i", .devices = order});
  Array placed = where(zeros({local}));
  for (int i = 0; i < local; ++i) {
    CHECK(placed.addressable_shards()[static_cast<size_t>(i)].device() == order[static_cast<size_t>(p * local + i)]);
    CHECK(placed.to_vector<float>()[static_cast<size_t>(i)] == static_cast<float>(p * local + i));
  }
  std::vector<Device> wrong = order;
  std::swap(wrong.front(), wrong.back());
  CHECK_THROWS_WITH(pmap([](const Array& v) { return v; }, PmapOptions{.devices = wrong})(zeros({local})),
                    Catch::Contains("devices are listed process-major"));
}

TEST_CASE("mpi2: pmap as a primitive under jit, grad and vmap spans the processes", "[.mpi2]") {
  distributed::initialize();
  const int local = static_cast<int>(distributed::local_devices().size());
  const int n = 2 * local;
  const Array xs = global_input(n);
  const Array mine = local_rows(xs);
  auto f = [](const Array& v) { return psum(sin(v), "i") + astype(axis_index("i"), f32); };
  // jit(pmap): one pmap node, run by every process on its own rows.
  const Array y = jit(pmap(f, "i"))(mine);
  REQUIRE(y.shape() == Shape{local, kColumns});
  const Array eager = pmap(f, "i")(mine);
  check_equal(y, eager);
  // grad(pmap): d/dx sum over every process of psum(sin x) = n cos x, on this process's rows.
  auto total = [&](const Array& v) { return sum(pmap(f, "i")(v)); };
  check_close(grad(total)(mine), cos(mine) * static_cast<float>(n));
  check_close(jit(grad(total))(mine), cos(mine) * static_cast<float>(n));
  // A replicated weight: its gradient sums every process's replicas (psum in the transposed body).
  const Array w = full({kColumns}, 0.5f);
  auto weighted = [&](const Array& u, const Array& v) {
    return sum(pmap([](const Array& a, const Array& b) { return a * sin(b); },
                    PmapOptions{.axis_name = "i", .in_axes = Axes{none, 0}})(u, v));
  };
  check_close(grad(weighted)(w, mine), sum(sin(xs), {0}), 1e-5);
  // vmap(pmap): a batch of 2 global inputs, each mapped over the processes.
  auto batched = vmap(pmap(f, "i"));
  const Array both = stack({mine, mine * 2.0f});
  const Array out = batched(both);
  check_close(out[0], pmap(f, "i")(mine));
  check_close(out[1], pmap(f, "i")(mine * 2.0f));
}

TEST_CASE("mpi2: processes that disagree on a collective get a ShapeError naming both", "[.mpi2]") {
  distributed::initialize();
  const int p = distributed::process_index();
  const int local = static_cast<int>(distributed::local_devices().size());
  auto f = pmap([](const Array& v) { return psum(v, "i"); }, "i");
  CHECK_THROWS_AS(f(zeros({local, 3 + p})), ShapeError);
  CHECK_THROWS_WITH(f(zeros({local, 3 + p})),
                    Catch::Contains("process 0 runs psum f32[3] over axis 'i'") &&
                        Catch::Contains("process 1 runs psum f32[4] over axis 'i'"));
  // Both processes are still in step: the next call works.
  check_equal(f(ones({local, 2})), full({local, 2}, static_cast<float>(2 * local)));
}

// Process 1's replica runs out of memory while process 0's waits for it in a psum.
TEST_CASE("mpi2_failure: process 1 fails", "[.mpi2_failure]") {
  if (std::getenv("OMPI_COMM_WORLD_RANK") && std::string(std::getenv("OMPI_COMM_WORLD_RANK")) == "1")
    setenv("GRAFT_MEM_FRACTION", "0.0001", 1);  // read when the devices are made, in initialize
  distributed::initialize();
  auto f = pmap(  // a 16 MiB matrix product: far past process 1's few MB
      [](const Array& v) { return psum(sum(matmul(broadcast_to(v, {2048, 1}), broadcast_to(v, {1, 2048}))), "i"); },
      "i");
  f(ones({1}));
  FAIL("process " << distributed::process_index() << " finished a pmap whose other replica failed");
}

// Process 1 never reaches the psum that process 0 waits in.
TEST_CASE("mpi2_timeout: process 1 never joins", "[.mpi2_timeout]") {
  distributed::initialize();
  if (distributed::process_index() == 1) std::this_thread::sleep_for(std::chrono::seconds(60));
  pmap([](const Array& v) { return psum(v, "i"); }, "i")(ones({1, 3}));
  FAIL("the psum completed without process 1");
}
