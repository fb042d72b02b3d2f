// Linear algebra: graft's cholesky, triangular solves, solve, eigh, qr and svd beside JAX (XLA
// CPU, LAPACK) and NumPy (LAPACK through OpenBLAS) on the same matrices, in
// one run.
//
//   ./build/bench/linalg [--python /path/to/venv/bin/python] [--repeats 7]
//
// Rows: linalg::cholesky of f64 symmetric positive definite matrices at
// n = 64, 256 and 1024 and a batch of 1000 8x8 ones; solve_triangular of
// the factor against n right-hand sides; linalg::solve (LU with partial
// pivoting) of the matrix against them; linalg::eigh, linalg::qr and
// linalg::svd (reduced) of the matrix. graft eager and under jit (cpu
// backend); jnp.linalg.cholesky, jax.scipy.linalg.solve_triangular and
// jnp.linalg.solve, eigh, qr and svd under jax.jit;
// np.linalg.cholesky, scipy.linalg.solve_triangular (NumPy has no batched
// triangular solve), np.linalg.solve, eigh, qr and svd. Times are min, median and max over the
// repeats; the last column is graft eager's median over the row's (above 1: faster than graft).
#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

#include "graft/graft.h"
#include "python_peer.h"
#include "timing.h"

using namespace graft;

namespace {

struct Row {
  const char* name;
  int64_t batch, n;
};

// x x^T / n + I: positive definite and well conditioned.
Array spd(int64_t batch, int64_t n) {
  Shape s = batch ? Shape{batch, n, n} : Shape{n, n};
  const Array x = random::normal(random::key(7), s, DType::f64);
  std::vector<int> perm;
  for (size_t i = 0; i < s.size(); ++i) perm.push_back(static_cast<int>(i));
  std::swap(perm[s.size() - 1], perm[s.size() - 2]);
  return matmul(x, transpose(x, perm)) / static_cast<double>(n) + eye(n, DType::f64);
}

void show(const char* row, const char* path, const TimeSpread& t, double base) {
  std::printf("%-24s %-12s %9.3f %9.3f %9.3f %8.2f\n", row, path, t.min * 1e3, t.median * 1e3, t.max * 1e3,
              base / t.median);
}

}  // namespace

int main(int argc, char** argv) {
  const auto [python, repeats] = parse_peer_args(argc, argv, 7);
  const std::vector<Row> rows = {
      {"cholesky 64", 0, 64}, {"cholesky 256", 0, 256}, {"cholesky 1024", 0, 1024}, {"cholesky 1000 x 8x8", 1000, 8}};
  std::printf("%-24s %-12s %29s %8s\n", "f64", "path", "time ms (min med max)", "eager/this");
  for (const Row& r : rows) {
    const Array a = spd(r.batch, r.n);
    Array l = linalg::cholesky(a);
    const TimeSpread eager = timed_spread([&] { l = linalg::cholesky(a); }, repeats);
    show(r.name, "graft eager", eager, eager.median);
    auto jc = jit([](const Array& m) { return linalg::cholesky(m); }, JitOptions{.backend = Backend::cpu});
    Array lj = jc(a);
    show(r.name, "graft jit", timed_spread([&] { lj = jc(a); }, repeats), eager.median);
    // The triangular solve of the factor against n right-hand sides.
    const Array b = random::normal(random::key(8), l.shape(), DType::f64);
    Array x = linalg::solve_triangular(l, b, true);
    const TimeSpread solve = timed_spread([&] { x = linalg::solve_triangular(l, b, true); }, repeats);
    std::string sname = std::string("solve_tri") + (r.name + 8);
    show(sname.c_str(), "graft eager", solve, solve.median);
    Array xs = linalg::solve(a, b);
    const TimeSpread lu_solve = timed_spread([&] { xs = linalg::solve(a, b); }, repeats);
    std::string lname = std::string("solve") + (r.name + 8);
    show(lname.c_str(), "graft eager", lu_solve, lu_solve.median);
    std::pair<Array, Array> wv = linalg::eigh(a), qr = linalg::qr(a);
    const TimeSpread eigh = timed_spread([&] { wv = linalg::eigh(a); }, repeats);
    const TimeSpread qr_time = timed_spread([&] { qr = linalg::qr(a); }, repeats);
    std::tuple<Array, Array, Array> usv = linalg::svd(a, false);
    const TimeSpread svd_time = timed_spread([&] { usv = linalg::svd(a, false); }, repeats);
    std::string ename = std::string("eigh") + (r.name + 8), qname = std::string("qr") + (r.name + 8);
    std::string vname = std::string("svd") + (r.name + 8);
    show(ename.c_str(), "graft eager", eigh, eigh.median);
    show(qname.c_str(), "graft eager", qr_time, qr_time.median);
    show(vname.c_str(), "graft eager", svd_time, svd_time.median);
    if (!python.empty()) {
      save_npy("/tmp/graft_bench_linalg_a.npy", a);
      save_npy("/tmp/graft_bench_linalg_b.npy", b);
      const std::string rep = std::to_string(repeats);
      const std::string script =
          "import time, numpy as np\n"
          "a = np.load('/tmp/graft_bench_linalg_a.npy'); b = np.load('/tmp/graft_bench_linalg_b.npy')\n" +
          std::string(kPythonSpread) +
          "def show(row, name, t, base): print('%-24s %-12s %9.3f %9.3f %9.3f %8.2f' % (row, name, t[0]*1e3, "
          "t[1]*1e3, t[2]*1e3, base / t[1]))\n"
          "chol_base, solve_base, lu_base, eigh_base, qr_base, svd_base = " +
          std::to_string(eager.median) + ", " + std::to_string(solve.median) + ", " + std::to_string(lu_solve.median) +
          ", " + std::to_string(eigh.median) + ", " + std::to_string(qr_time.median) + ", " +
          std::to_string(svd_time.median) +
          "\n"
          "row = '" +
          r.name + "'; srow = '" + sname + "'; lrow = '" + lname + "'; erow = '" + ename + "'; qrow = '" + qname +
          "'; vrow = '" + vname +
          "'\n"
          "show(row, 'numpy', spread(lambda: np.linalg.cholesky(a), " +
          rep +
          "), chol_base)\n"
          "try:\n"
          "  import jax, jax.numpy as jnp, jax.scipy.linalg\n"
          "  jax.config.update('jax_enable_x64', True)\n"
          "  ja, jb = jnp.asarray(a), jnp.asarray(b)\n"
          "  f = jax.jit(jnp.linalg.cholesky); f(ja).block_until_ready()\n"
          "  show(row, 'jax', spread(lambda: f(ja).block_until_ready(), " +
          rep +
          "), chol_base)\n"
          "  l = f(ja)\n"
          "  g = jax.jit(lambda l, b: jax.scipy.linalg.solve_triangular(l, b, lower=True)); g(l, "
          "jb).block_until_ready()\n"
          "  show(srow, 'jax', spread(lambda: g(l, jb).block_until_ready(), " +
          rep +
          "), solve_base)\n"
          "  h = jax.jit(jnp.linalg.solve); h(ja, jb).block_until_ready()\n"
          "  show(lrow, 'jax', spread(lambda: h(ja, jb).block_until_ready(), " +
          rep +
          "), lu_base)\n"
          "  e = jax.jit(jnp.linalg.eigh); e(ja)[0].block_until_ready()\n"
          "  show(erow, 'jax', spread(lambda: e(ja)[0].block_until_ready(), " +
          rep +
          "), eigh_base)\n"
          "  qf = jax.jit(jnp.linalg.qr); qf(ja)[0].block_until_ready()\n"
          "  show(qrow, 'jax', spread(lambda: qf(ja)[0].block_until_ready(), " +
          rep +
          "), qr_base)\n"
          "  sv = jax.jit(lambda x: jnp.linalg.svd(x, full_matrices=False)); sv(ja)[0].block_until_ready()\n"
          "  show(vrow, 'jax', spread(lambda: sv(ja)[0].block_until_ready(), " +
          rep +
          "), svd_base)\n"
          "except ImportError:\n"
          "  pass\n"
          "if a.ndim == 2:\n"
          "  import scipy.linalg\n"
          "  l = np.linalg.cholesky(a)\n"
          "  show(srow, 'scipy', spread(lambda: scipy.linalg.solve_triangular(l, b, lower=True), " +
          rep +
          "), "
          "solve_base)\n"
          "show(lrow, 'numpy', spread(lambda: np.linalg.solve(a, b), " +
          rep +
          "), lu_base)\n"
          "show(erow, 'numpy', spread(lambda: np.linalg.eigh(a), " +
          rep +
          "), eigh_base)\n"
          "show(qrow, 'numpy', spread(lambda: np.linalg.qr(a), " +
          rep +
          "), qr_base)\n"
          "show(vrow, 'numpy', spread(lambda: np.linalg.svd(a, full_matrices=False), " +
          rep + "), svd_base)\n";
      run_python_script(python, "/tmp/graft_bench_linalg.py", script);
    }
  }
}
