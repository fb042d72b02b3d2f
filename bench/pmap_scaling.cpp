// pmap_scaling: throughput of a data-parallel training step (an MLP's
// forward, backward, pmean of gradients and update; matmul-bound) on 1 and
// on 2 virtual CPU devices, side by side. Each virtual device owns an equal
// share of the cores (GRAFT_CPU_DEVICES=2 on 2 cores: one core each), so the
// ratio measures how well replicas run side by side: 2.0 is perfect.
// For scale, the same step jitted on the whole machine (no pmap) is shown.
// Then the same step across 2 processes of 1 core each (graft::distributed
// over MPI): the program starts itself under mpirun and prints those rows
// beside the 1-process ones, with the cost of a one-op pmap call in each.
//
//   ./build/bench/pmap_scaling
#include <cstdio>
#include <cstdlib>
#include <string>
#include <tuple>

#include "graft/graft.h"
#include "timing.h"

using namespace graft;

namespace {

constexpr int64_t kPerDevice = 256, kWidth = 512;

struct Mlp {
  Array w1, w2, w3;
};

}  // namespace

GRAFT_PYTREE(Mlp, w1, w2, w3);

namespace {

Array loss(const Mlp& p, const Array& x) {
  Array h = graft::tanh(matmul(x, p.w1));
  h = graft::tanh(matmul(h, p.w2));
  Array out = matmul(h, p.w3);
  return mean(out * out);
}

Array wiggle(Shape shape, float scale, float phase) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return reshape(sin(arange(n, f32) * 1.618f + phase) * scale, shape);
}

Array copies(const Array& a, int n) { return stack(std::vector<Array>(static_cast<size_t>(n), a)); }

// Seconds per step of pmap on `devs` (n of them in this process), the
// parameters kept sharded between steps; under_jit: jit(pmap(step)), one
// pmap node in a jit program.
double seconds_per_step(int n, const std::vector<Device>& devs, bool under_jit = false) {
  auto pmapped = pmap(
      [](const Mlp& p, const Array& x) {
        Mlp g = grad(loss)(p, x);
        auto avg = [](const Array& a) { return pmean(a, "d"); };
        return Mlp{p.w1 - 0.01f * avg(g.w1), p.w2 - 0.01f * avg(g.w2), p.w3 - 0.01f * avg(g.w3)};
      },
      PmapOptions{.axis_name = "d", .devices = devs});
  auto jitted = jit(pmapped, {.wait_for_compile = true});
  auto step = [&](const Mlp& p, const Array& x) { return under_jit ? jitted(p, x) : pmapped(p, x); };
  const float s = 1.0f / static_cast<float>(kWidth);
  Mlp params{copies(wiggle({kWidth, kWidth}, s, 0.1f), n), copies(wiggle({kWidth, kWidth}, s, 0.2f), n),
             copies(wiggle({kWidth, kWidth}, s, 0.3f), n)};
  Array x = wiggle({n, kPerDevice, kWidth}, 1.0f, 0.4f);
  params = step(params, x);  // compile, and leave the parameters sharded
  const int steps = 10;
  return best_seconds([&] {
           for (int i = 0; i < steps; ++i) params = step(params, x);
           params.w3.to_vector<float>();  // wait for nothing: pmap returns when every replica is done
         }) /
         steps;
}

double seconds_per_jit_step(int64_t batch) {
  auto step = jit([](const Mlp& p, const Array& x) {
    Mlp g = grad(loss)(p, x);
    return Mlp{p.w1 - 0.01f * g.w1, p.w2 - 0.01f * g.w2, p.w3 - 0.01f * g.w3};
  }, {.wait_for_compile = true});
  const float s = 1.0f / static_cast<float>(kWidth);
  Mlp params{wiggle({kWidth, kWidth}, s, 0.1f), wiggle({kWidth, kWidth}, s, 0.2f), wiggle({kWidth, kWidth}, s, 0.3f)};
  Array x = wiggle({batch, kWidth}, 1.0f, 0.4f);
  params = step(params, x);
  const int steps = 10;
  return best_seconds([&] {
           for (int i = 0; i < steps; ++i) params = step(params, x);
         }) /
         steps;
}

// Microseconds per pmap call of a one-op function on f32[8] per device: the
// cost of starting replicas, splitting the argument and joining them.
double call_overhead_us(int n, const std::vector<Device>& devs) {
  auto twice = pmap([](const Array& v) { return v * 2.0f; }, PmapOptions{.devices = devs});
  Array x = wiggle({n, 8}, 1.0f, 0.0f);
  twice(x);
  const int calls = 2000;
  return best_seconds([&] {
           for (int i = 0; i < calls; ++i) twice(x);
         }) /
         calls * 1e6;
}

std::vector<Device> first(int n) {
  const std::vector<Device> all = devices();
  return std::vector<Device>(all.begin(), all.begin() + n);
}

// One process of the 2-process run: one device, one core. Process 0 prints
// its measurements on one line for the parent to read.
int mpi_worker() {
  distributed::initialize();
  const double step = seconds_per_step(1, devices());
  const double call = call_overhead_us(1, devices());
  if (distributed::process_index() == 0) std::printf("mpi-result %d %.9f %.3f\n", distributed::process_count(), step, call);
  return 0;
}

struct MpiRow {
  bool ok = false;
  double step = 0, call_us = 0;
  std::string why;
};

MpiRow run_two_processes(const char* self) {
  MpiRow row;
#ifdef GRAFT_MPIEXEC
  // Each process bound to its own core, with one device and one thread.
  const std::string command = std::string("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ") +
                              "GRAFT_CPU_DEVICES=1 OMP_NUM_THREADS=1 " GRAFT_MPIEXEC " --bind-to core -np 2 '" + self +
                              "' --mpi-worker 2>&1";
  std::FILE* pipe = popen(command.c_str(), "r");
  char line[4096];
  std::string all;
  while (pipe && std::fgets(line, sizeof line, pipe)) {
    all += line;
    int count = 0;
    if (std::sscanf(line, "mpi-result %d %lf %lf", &count, &row.step, &row.call_us) == 3 && count == 2) row.ok = true;
  }
  if (pipe) pclose(pipe);
  if (!row.ok) row.why = "mpirun -np 2 did not report:\n" + all;
#else
  (void)self;
  row.why = "graft was built without MPI";
#endif
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--mpi-worker") return mpi_worker();
  setenv("GRAFT_CPU_DEVICES", "2", 0);
  if (devices().size() < 2) {
    std::fprintf(stderr, "pmap_scaling needs GRAFT_CPU_DEVICES >= 2\n");
    return 2;
  }
  const double flops = 3.0 * 3.0 * 2.0 * kPerDevice * kWidth * kWidth;  // 3 matmuls, forward + 2 backward each
  const double one = seconds_per_step(1, first(1)), two = seconds_per_step(2, first(2));
  const double whole = seconds_per_jit_step(2 * kPerDevice);
  const double two_jit = seconds_per_step(2, first(2), true);
  std::printf("MLP training step, %lld examples per device, width %lld (%.2f GFLOP per device per step)\n",
              static_cast<long long>(kPerDevice), static_cast<long long>(kWidth), flops / 1e9);
  std::printf("%-34s %12s %16s %10s\n", "", "ms/step", "examples/s", "vs 1 dev");
  std::printf("%-34s %12.2f %16.0f %10.2fx\n", "pmap, 1 device (its share: 1 core)", one * 1e3, kPerDevice / one, 1.0);
  std::printf("%-34s %12.2f %16.0f %10.2fx\n", "pmap, 2 devices", two * 1e3, 2 * kPerDevice / two,
              (2 * kPerDevice / two) / (kPerDevice / one));
  std::printf("%-34s %12.2f %16.0f %10.2fx\n", "jit(pmap), 2 devices", two_jit * 1e3, 2 * kPerDevice / two_jit,
              (2 * kPerDevice / two_jit) / (kPerDevice / one));
  std::printf("%-34s %12.2f %16.0f %10.2fx\n", "jit, no pmap, all cores, 2x batch", whole * 1e3,
              2 * kPerDevice / whole, (2 * kPerDevice / whole) / (kPerDevice / one));
  const MpiRow procs = run_two_processes(argv[0]);
  if (procs.ok)
    std::printf("%-34s %12.2f %16.0f %10.2fx\n", "pmap, 2 processes x 1 core (MPI)", procs.step * 1e3,
                2 * kPerDevice / procs.step, (2 * kPerDevice / procs.step) / (kPerDevice / one));
  else
    std::printf("pmap, 2 processes: not measured: %s\n", procs.why.c_str());
  std::printf("pmap call of a 1-op f32[8] function: %.1f us on 1 device, %.1f us on 2 devices", call_overhead_us(1, first(1)),
              call_overhead_us(2, first(2)));
  if (procs.ok) std::printf(", %.1f us on 2 processes (1 device each)", procs.call_us);
  std::printf("\n");
  return 0;
}
