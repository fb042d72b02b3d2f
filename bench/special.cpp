// Special functions: throughput and accuracy, graft beside JAX (XLA CPU) and
// SciPy on the same inputs, in one run.
//
//   ./build/bench/special [--python /path/to/venv/bin/python] [--repeats 7]
//
// Each row applies one function to 2^20 f32 values spread over a typical
// domain and prints graft's time (min, median, max over the repeats) eagerly
// and under jit (cpu backend, generated C++, waited for), and its largest
// error in f32 ulps against the same function evaluated in f64 by graft
// (whose f64 accuracy docs/SPECIAL_FUNCTIONS.md tables against mpmath). With
// --python, jax.jit of jax.scipy.special's function and scipy.special's (in
// f32 where SciPy has an f32 loop) print beside it with their errors against
// the same f64 values.
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "graft/graft.h"
#include "graft/special.h"
#include "python_peer.h"
#include "timing.h"

using namespace graft;

namespace {

struct Fn {
  const char* name;   // graft's name
  const char* jax;    // the JAX expression of x (and y)
  const char* scipy;  // the SciPy expression
  double lo, hi;      // x's domain
  double ylo, yhi;    // y's domain (binary functions)
  std::function<Array(const Array&, const Array&)> f;
  bool binary = false;
};

int64_t ulps(float a, float b) {
  if (std::isnan(a) && std::isnan(b)) return 0;
  if (std::isnan(a) || std::isnan(b)) return INT64_MAX;
  auto ord = [](float x) {
    const int32_t i = std::bit_cast<int32_t>(x);
    return i < 0 ? static_cast<int64_t>(INT32_MIN) - i : static_cast<int64_t>(i);
  };
  const int64_t d = ord(a) - ord(b);
  return d < 0 ? -d : d;
}

}  // namespace

int main(int argc, char** argv) {
  const auto [python, repeats] = parse_peer_args(argc, argv, 7);
  using namespace graft::special;
  const std::vector<Fn> fns = {
      {"erf_inv", "jax.scipy.special.erfinv(x)", "sp.erfinv(x)", -0.999, 0.999, 0, 0,
       [](const Array& x, const Array&) { return erfinv(x); }},
      {"erfc", "jax.scipy.special.erfc(x)", "sp.erfc(x)", -4, 9, 0, 0,
       [](const Array& x, const Array&) { return erfc(x); }},
      {"lgamma", "jax.scipy.special.gammaln(x)", "sp.gammaln(x)", 0.01, 50, 0, 0,
       [](const Array& x, const Array&) { return gammaln(x); }},
      {"digamma", "jax.scipy.special.digamma(x)", "sp.digamma(x)", 0.01, 50, 0, 0,
       [](const Array& x, const Array&) { return digamma(x); }},
      {"i0e", "jax.scipy.special.i0e(x)", "sp.i0e(x)", -30, 30, 0, 0,
       [](const Array& x, const Array&) { return i0e(x); }},
      {"i1e", "jax.scipy.special.i1e(x)", "sp.i1e(x)", -30, 30, 0, 0,
       [](const Array& x, const Array&) { return i1e(x); }},
      {"ndtr", "jax.scipy.special.ndtr(x)", "sp.ndtr(x)", -8, 8, 0, 0,
       [](const Array& x, const Array&) { return ndtr(x); }},
      {"log_ndtr", "jax.scipy.special.log_ndtr(x)", "sp.log_ndtr(x)", -30, 8, 0, 0,
       [](const Array& x, const Array&) { return log_ndtr(x); }},
      {"ndtri", "jax.scipy.special.ndtri(x)", "sp.ndtri(x)", 1e-6, 1 - 1e-6, 0, 0,
       [](const Array& x, const Array&) { return ndtri(x); }},
      {"gammainc", "jax.scipy.special.gammainc(x, y)", "sp.gammainc(x, y)", 0.1, 20, 0.01, 30,
       [](const Array& x, const Array& y) { return gammainc(x, y); }, true},
  };
  const int64_t n = int64_t{1} << 20;
  std::printf("%-10s %-10s %26s %9s %9s\n", "f32[2^20]", "path", "time ms (min med max)", "x graft", "max ulps");
  uint64_t seed = 1;
  for (const Fn& fn : fns) {
    const Array x = random::uniform(random::key(seed++), {n}, fn.lo, fn.hi, DType::f32);
    const Array y = fn.binary ? random::uniform(random::key(seed++), {n}, fn.ylo, fn.yhi, DType::f32) : x;
    const std::vector<float> ref =
        astype(fn.f(astype(x, DType::f64), astype(y, DType::f64)), DType::f32).to_vector<float>();
    auto max_ulps = [&](const std::vector<float>& got) {
      int64_t worst = 0;
      for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, ulps(got[i], ref[i]));
      return worst;
    };
    Array got = fn.f(x, y);
    const TimeSpread eager = timed_spread([&] { got = fn.f(x, y); }, repeats);
    std::printf("%-10s %-10s %8.3f %8.3f %8.3f %9s %9lld\n", fn.name, "eager", eager.min * 1e3, eager.median * 1e3,
                eager.max * 1e3, "1.00", static_cast<long long>(max_ulps(got.to_vector<float>())));
    JitOptions o;
    o.backend = Backend::cpu;
    o.wait_for_compile = true;
    // -f(x): a lone op runs the interpreter's kernel; fused with a negation it runs generated C++.
    auto jf = jit([&](const Array& a, const Array& b) { return -fn.f(a, b); }, o);
    Array r = jf(x, y);
    const TimeSpread jt = timed_spread([&] { r = jf(x, y); }, repeats);
    std::vector<float> neg = r.to_vector<float>();
    for (float& v : neg) v = -v;
    std::printf("%-10s %-10s %8.3f %8.3f %8.3f %9.2f %9lld\n", fn.name, "jit cpu", jt.min * 1e3, jt.median * 1e3,
                jt.max * 1e3, eager.median / jt.median, static_cast<long long>(max_ulps(neg)));
    if (!python.empty()) {
      save_npy("/tmp/graft_bench_special_x.npy", x);
      save_npy("/tmp/graft_bench_special_y.npy", y);
      save_npy("/tmp/graft_bench_special_ref.npy", array(ref, {n}));
      const std::string r = std::to_string(repeats);
      const std::string script =
          "import time, numpy as np\n"
          "x = np.load('/tmp/graft_bench_special_x.npy'); y = np.load('/tmp/graft_bench_special_y.npy')\n"
          "ref = np.load('/tmp/graft_bench_special_ref.npy')\n"
          "def ulps(g):\n"
          "  g = np.asarray(g, np.float32)\n"
          "  def o(v):\n"
          "    i = v.view(np.int32).astype(np.int64); return np.where(i < 0, -2**31 - i, i)\n"
          "  d = np.abs(o(g) - o(ref)); both = np.isnan(g) & np.isnan(ref); d[both] = 0\n"
          "  d[np.isnan(g) ^ np.isnan(ref)] = 2**62; return int(d.max())\n" +
          std::string(kPythonSpread) + "def show(name, t, g): print('%-10s %-10s %8.3f %8.3f %8.3f %9.2f %9d' % ('" +
          std::string(fn.name) + "', name, t[0]*1e3, t[1]*1e3, t[2]*1e3, " + std::to_string(eager.median) +
          " / t[1], ulps(g)))\n"
          "try:\n"
          "  import jax, jax.numpy as jnp, jax.scipy.special\n"
          "  jx, jy = jnp.asarray(x), jnp.asarray(y)\n"
          "  f = jax.jit(lambda x, y: " +
          fn.jax +
          "); f(jx, jy).block_until_ready()\n"
          "  show('jax', spread(lambda: f(jx, jy).block_until_ready(), " +
          r +
          "), f(jx, jy))\n"
          "except ImportError:\n"
          "  pass\n"
          "try:\n"
          "  import scipy.special as sp\n"
          "  show('scipy', spread(lambda: " +
          fn.scipy + ", " + r + "), " + fn.scipy +
          ")\n"
          "except ImportError:\n"
          "  pass\n";
      run_python_script(python, "/tmp/graft_bench_special.py", script);
    }
  }
}
