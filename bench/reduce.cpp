// Float sums: throughput and error, graft beside NumPy (and JAX when the given
// Python has it) on the same data, in one run.
//
//   ./build/bench/reduce [--python /path/to/venv/bin/python] [--repeats 7]
//
// Each row sums f32 standard normals squared (the shape of a loss) and prints
// graft's time (min, median, max over the repeats), its GB/s, and its
// relative error against the exact sum of the same f32 values (computed in
// long double). Paths: eager `sum`, the jit interpreter backend (the tiled
// evaluator) and jit cpu (generated C++, waited for), on a full reduction,
// row sums, column sums and a middle axis. With --python, NumPy's np.sum (and
// jnp.sum under jax.jit) on the same .npy data print beside it, with their
// errors against the same exact sums. Error is the max over outputs of
// |sum - exact| / sum of |terms| (the relative condition of the sum).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "graft/graft.h"
#include "python_peer.h"
#include "timing.h"

using namespace graft;

namespace {

struct Case {
  const char* name;
  Shape shape;
  std::vector<int> axes;
};

// Max over outputs of |got - exact| / sum|terms| for a sum over `axes` of x (all f32).
double sum_error(const std::vector<float>& x, const Shape& shape, const std::vector<int>& axes, const std::vector<float>& got) {
  // [outer, reduced, inner] for one contiguous run of axes (every case here).
  int64_t outer = 1, red = 1, inner = 1;
  const int lo = axes.empty() ? 0 : axes.front(), hi = axes.empty() ? static_cast<int>(shape.size()) - 1 : axes.back();
  for (int i = 0; i < static_cast<int>(shape.size()); ++i) (i < lo ? outer : i <= hi ? red : inner) *= shape[static_cast<size_t>(i)];
  double worst = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j) {
      long double exact = 0, mag = 0;
      for (int64_t r = 0; r < red; ++r) {
        const float v = x[static_cast<size_t>((o * red + r) * inner + j)];
        exact += v;
        mag += std::fabs(v);
      }
      const double e = static_cast<double>(std::fabs(static_cast<long double>(got[static_cast<size_t>(o * inner + j)]) - exact) / mag);
      worst = std::max(worst, e);
    }
  return worst;
}

std::string axes_text(const std::vector<int>& axes) {
  std::string s = "(";
  for (size_t i = 0; i < axes.size(); ++i) s += (i ? "," : "") + std::to_string(axes[i]);
  return s + (axes.size() == 1 ? ",)" : ")");
}

}  // namespace

int main(int argc, char** argv) {
  const auto [python, repeats] = parse_peer_args(argc, argv, 7);
  const std::vector<Case> cases = {
      {"full f32[2^24]", {int64_t{1} << 24}, {0}},
      {"rows f32[4096,4096] axis 1", {4096, 4096}, {1}},
      {"columns f32[4096,4096] axis 0", {4096, 4096}, {0}},
      {"middle f32[64,1024,256] axis 1", {64, 1024, 256}, {1}},
      {"rows f32[2^16,16] axis 1", {int64_t{1} << 16, 16}, {1}},
  };
  std::printf("%-34s %-12s %26s %8s %10s\n", "sum(x*x) of normals", "path", "time ms (min med max)", "GB/s", "rel. error");
  int k = 0;
  for (const Case& c : cases) {
    Array x = random::normal(random::key(static_cast<uint64_t>(17 + k++)), c.shape);
    Array xx = x * x;
    const std::vector<float> terms = xx.to_vector<float>();
    const double gb = static_cast<double>(terms.size()) * 4 / 1e9;
    auto report = [&](const char* path, const TimeSpread& t, const Array& got) {
      const double err = sum_error(terms, c.shape, c.axes, got.to_vector<float>());
      std::printf("%-34s %-12s %8.3f %8.3f %8.3f %8.2f %10.2e\n", c.name, path, t.min * 1e3, t.median * 1e3, t.max * 1e3,
                  gb / t.median, err);
    };
    // Eager: the reduce kernel on the squared values.
    Array got = sum(xx, c.axes);
    report("eager", timed_spread([&] { got = sum(xx, c.axes); }, repeats), got);
    // jit: sum(x * x) fused (the square computed in the reduction's loop).
    for (Backend b : {Backend::interpreter, Backend::cpu}) {
      JitOptions o;
      o.backend = b;
      o.wait_for_compile = true;
      auto f = jit([&](const Array& a) { return sum(a * a, c.axes); }, o);
      Array r = f(x);
      report(b == Backend::cpu ? "jit cpu" : "jit interp", timed_spread([&] { r = f(x); }, repeats), r);
    }
    if (!python.empty()) {
      const std::string path = "/tmp/graft_bench_reduce.npy";
      save_npy(path, xx);
      const std::string axes = axes_text(c.axes);
      const std::string script =
          "import sys, time, numpy as np\n"
          "x = np.load('" +
          path + "'); ax = " + axes +
          "\n"
          "x64 = x.astype(np.longdouble); exact = x64.sum(axis=ax); mag = np.abs(x64).sum(axis=ax)\n"
          "def err(g): return float(np.max(np.abs(np.asarray(g, np.longdouble) - exact) / mag))\n" +
          std::string(kPythonSpread) + "def show(name, t, g): print('%-34s %-12s %8.3f %8.3f %8.3f %8.2f %10.2e' % ('" +
          std::string(c.name) +
          "', name, t[0]*1e3, t[1]*1e3, t[2]*1e3, x.nbytes / 1e9 / t[1], err(g)))\n"
          "show('numpy', spread(lambda: x.sum(axis=ax), " +
          std::to_string(repeats) +
          "), x.sum(axis=ax))\n"
          "try:\n"
          "  import jax, jax.numpy as jnp\n"
          "  jx = jnp.asarray(x); f = jax.jit(lambda a: jnp.sum(a, axis=ax)); f(jx).block_until_ready()\n"
          "  show('jax', spread(lambda: f(jx).block_until_ready(), " +
          std::to_string(repeats) +
          "), f(jx))\n"
          "except ImportError:\n"
          "  pass\n";
      run_python_script(python, "/tmp/graft_bench_reduce.py", script);
    }
  }
  // cumsum: sequential in every backend (each prefix is a sum of its own),
  // measured against exact prefixes beside NumPy's np.cumsum (also sequential).
  {
    const int64_t n = int64_t{1} << 20;
    Array x = random::normal(random::key(99), {n});
    Array xx = x * x;
    const std::vector<float> terms = xx.to_vector<float>();
    Array c = cumsum(xx, 0);
    const TimeSpread t = timed_spread([&] { c = cumsum(xx, 0); }, repeats);
    const std::vector<float> got = c.to_vector<float>();
    long double exact = 0, mag = 0;
    double worst = 0;
    for (size_t i = 0; i < terms.size(); ++i) {
      exact += terms[i];
      mag += std::fabs(static_cast<long double>(terms[i]));
      worst = std::max(worst, static_cast<double>(std::fabs(got[i] - exact) / mag));
    }
    std::printf("%-34s %-12s %8.3f %8.3f %8.3f %8.2f %10.2e\n", "cumsum f32[2^20] (max over prefixes)", "eager", t.min * 1e3,
                t.median * 1e3, t.max * 1e3, static_cast<double>(n) * 4 / 1e9 / t.median, worst);
    if (!python.empty()) {
      save_npy("/tmp/graft_bench_cumsum.npy", xx);
      const std::string script =
          "import time, numpy as np\n"
          "x = np.load('/tmp/graft_bench_cumsum.npy'); e = np.cumsum(x.astype(np.longdouble)); m = np.cumsum(np.abs(x.astype(np.longdouble)))\n"
          "t = []\n"
          "for _ in range(" + std::to_string(repeats) + "):\n"
          "  t0 = time.perf_counter(); c = np.cumsum(x); t.append(time.perf_counter() - t0)\n"
          "t.sort(); err = float(np.max(np.abs(c.astype(np.longdouble) - e) / m))\n"
          "print('%-34s %-12s %8.3f %8.3f %8.3f %8.2f %10.2e' % ('cumsum f32[2^20] (max over prefixes)', 'numpy', t[0]*1e3, t[len(t)//2]*1e3, t[-1]*1e3, x.nbytes/1e9/t[len(t)//2], err))\n";
      run_python_script(python, "/tmp/graft_bench_cumsum.py", script);
    }
  }
  return 0;
}
