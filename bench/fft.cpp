// The FFT: graft::fft beside JAX (XLA CPU: DUCC) and NumPy (pocketfft) on
// the same data, in one run.
//
//   ./build/bench/fft [--python /path/to/venv/bin/python] [--repeats 7]
//
// Rows: rfft and irfft of 2^20 f32 values; fft along the last axis of a
// 1024 x 1024 c64 array (a batch of 1024 transforms); fft2 of it; both
// again in c128 (JAX with x64 enabled). graft
// eager and under jit; jnp.fft under jax.jit; np.fft (which computes in
// f64/c128 for f32 input: its time is an upper bound of what f32 costs).
// Times are min, median and max over the repeats; the last column is graft
// eager's median over the row's (above 1: faster than graft).
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "graft/graft.h"
#include "python_peer.h"
#include "timing.h"

using namespace graft;

namespace {

void show(const char* row, const char* path, const TimeSpread& t, double base) {
  std::printf("%-22s %-12s %9.3f %9.3f %9.3f %8.2f\n", row, path, t.min * 1e3, t.median * 1e3, t.max * 1e3,
              base / t.median);
}

struct Row {
  const char* name;
  std::function<Array(const Array&)> f;
  const char* jax;    // the expression of x in jnp
  const char* numpy;  // and in np
};

}  // namespace

int main(int argc, char** argv) {
  const auto [python, repeats] = parse_peer_args(argc, argv, 7);
  const Array signal = random::normal(random::key(1), {int64_t{1} << 20});
  const Array spectrum = fft::rfft(signal);
  const Array grid =
      complex(random::normal(random::key(2), {1024, 1024}), random::normal(random::key(3), {1024, 1024}));
  const Array grid128 = astype(grid, c128);
  struct Case {
    Row row;
    Array x;
    const char* file;
  };
  const std::vector<Case> cases = {
      {{"rfft 2^20 f32", [](const Array& x) { return fft::rfft(x); }, "jnp.fft.rfft(x)", "np.fft.rfft(x)"},
       signal,
       "/tmp/graft_bench_fft_signal.npy"},
      {{"irfft 2^20 f32", [](const Array& x) { return fft::irfft(x); }, "jnp.fft.irfft(x)", "np.fft.irfft(x)"},
       spectrum,
       "/tmp/graft_bench_fft_spectrum.npy"},
      {{"fft 1024 x 1024 c64", [](const Array& x) { return fft::fft(x); }, "jnp.fft.fft(x)", "np.fft.fft(x)"},
       grid,
       "/tmp/graft_bench_fft_grid.npy"},
      {{"fft2 1024 x 1024 c64", [](const Array& x) { return fft::fft2(x); }, "jnp.fft.fft2(x)", "np.fft.fft2(x)"},
       grid,
       "/tmp/graft_bench_fft_grid.npy"},
      // The same in c128 (JAX with x64 enabled): the strided pass of fft2 is where graft trails.
      {{"fft 1024 x 1024 c128", [](const Array& x) { return fft::fft(x); }, "jnp.fft.fft(x)", "np.fft.fft(x)"},
       grid128,
       "/tmp/graft_bench_fft_grid128.npy"},
      {{"fft2 1024 x 1024 c128", [](const Array& x) { return fft::fft2(x); }, "jnp.fft.fft2(x)", "np.fft.fft2(x)"},
       grid128,
       "/tmp/graft_bench_fft_grid128.npy"},
  };
  std::printf("%-22s %-12s %29s %8s\n", "", "path", "time ms (min med max)", "eager/this");
  for (const Case& c : cases) {
    Array y = c.row.f(c.x);
    const TimeSpread eager = timed_spread([&] { y = c.row.f(c.x); }, repeats);
    show(c.row.name, "graft eager", eager, eager.median);
    auto jf = jit(c.row.f, JitOptions{.backend = Backend::cpu});
    Array yj = jf(c.x);
    show(c.row.name, "graft jit", timed_spread([&] { yj = jf(c.x); }, repeats), eager.median);
    if (python.empty()) continue;
    save_npy(c.file, c.x);
    const std::string rep = std::to_string(repeats);
    const std::string script = "import time, numpy as np\nx = np.load('" + std::string(c.file) + "')\n" +
                               kPythonSpread +
                               "def show(row, name, t, base): print('%-22s %-12s %9.3f %9.3f %9.3f %8.2f' % (row, "
                               "name, t[0]*1e3, t[1]*1e3, t[2]*1e3, base / t[1]))\n"
                               "row, base = '" +
                               c.row.name + "', " + std::to_string(eager.median) +
                               "\nshow(row, 'numpy', spread(lambda: " + c.row.numpy + ", " + rep +
                               "), base)\n"
                               "try:\n"
                               "  import jax, jax.numpy as jnp\n"
                               "  jax.config.update('jax_enable_x64', True)  # c128 rows stay c128\n"
                               "  jx = jnp.asarray(x)\n"
                               "  f = jax.jit(lambda x: " +
                               c.row.jax +
                               "); f(jx).block_until_ready()\n"
                               "  show(row, 'jax', spread(lambda: f(jx).block_until_ready(), " +
                               rep +
                               "), base)\n"
                               "except ImportError:\n"
                               "  pass\n";
    run_python_script(python, "/tmp/graft_bench_fft.py", script);
  }
  return 0;
}
