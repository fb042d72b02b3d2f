// f32 GEMM: graft's matmul beside the strongest references in one run:
// OpenBLAS called directly (with the kernels graft made it run), and Eigen
// compiled for this CPU (-march=native, this file). Goal: graft >= 0.9x the
// better reference.
//
//   ./build/bench/gemm                        this machine as it is
//   ./build/bench/gemm --as-unrecognised-cpu  first forces OpenBLAS onto its
//       Prescott fallback (what it picks on a CPU it does not know), times it,
//       then lets graft repair it: the before and after of that repair.
#include <Eigen/Core>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "graft/graft.h"
#include "interpreter/blas_core.h"
#include "timing.h"
#ifdef GRAFT_HAVE_OPENBLAS
#include <cblas.h>
extern "C" {
void gotoblas_dynamic_init(void) __attribute__((weak));
void gotoblas_dynamic_quit(void) __attribute__((weak));
}
#endif

using namespace graft;

namespace {

using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

double gflops(double flops, double seconds) { return flops / seconds / 1e9; }

void row(const char* name, double graft_s, double ref_s, double flops) {
  std::printf("%-44s %8.1f GF/s %8.1f GF/s %7.2fx\n", name, gflops(flops, graft_s), gflops(flops, ref_s),
              ref_s / graft_s);
}

// One shape: C[m,n] = A op B, with B transposed when `tb`.
void bench_shape(const char* name, int64_t batch, int64_t m, int64_t k, int64_t n, bool tb) {
  Array a = full({batch, m, k}, 0.5), b = tb ? full({batch, n, k}, 0.25) : full({batch, k, n}, 0.25);
  auto run = [&] { return tb ? matmul(a, transpose(b, {0, 2, 1})) : matmul(a, b); };
  Array warm = run();
  const double flops = 2.0 * batch * m * n * k;
  const double t_graft = best_seconds([&] { Array c = run(); });
  std::vector<float> va(batch * m * k, 0.5f), vb(batch * k * n, 0.25f), vc(batch * m * n);
  const double t_eigen = best_seconds([&] {
    for (int64_t i = 0; i < batch; ++i) {
      Eigen::Map<const Mat> A(va.data() + i * m * k, m, k);
      Eigen::Map<Mat> C(vc.data() + i * m * n, m, n);
      if (tb) C.noalias() = A * Eigen::Map<const Mat>(vb.data() + i * n * k, n, k).transpose();
      else C.noalias() = A * Eigen::Map<const Mat>(vb.data() + i * k * n, k, n);
    }
  });
  double t_ref = t_eigen;
#ifdef GRAFT_HAVE_OPENBLAS
  const double t_blas = best_seconds([&] {
    for (int64_t i = 0; i < batch; ++i)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, 1.0f, va.data() + i * m * k,
                  k, vb.data() + i * k * n, tb ? k : n, 0.0f, vc.data() + i * m * n, n);
  });
  t_ref = std::min(t_ref, t_blas);
  std::printf("%-44s %8.1f GF/s  (OpenBLAS %.1f, Eigen-native %.1f GF/s)\n", name, gflops(flops, t_graft),
              gflops(flops, t_blas), gflops(flops, t_eigen));
#endif
  row("  vs the better reference", t_graft, t_ref, flops);
}

void run_all() {
  bench_shape("matmul f32 1024^3", 1, 1024, 1024, 1024, false);
  bench_shape("matmul f32 1024^3, B transposed", 1, 1024, 1024, 1024, true);
  bench_shape("batched matmul f32 16 x 256^3", 16, 256, 256, 256, false);
  bench_shape("MLP layer f32 256x784 @ 784x512", 1, 256, 784, 512, false);
}

}  // namespace

int main(int argc, char** argv) {
  const bool unrecognised = argc > 1 && std::strcmp(argv[1], "--as-unrecognised-cpu") == 0;
  Eigen::setNbThreads(0);
  std::printf("%s\n", build_info().c_str());
  std::printf("Eigen reference built for this CPU (-march=native), %d threads\n\n", Eigen::nbThreads());
  std::printf("%-44s %13s %13s %8s\n", "benchmark", "graft", "reference", "ratio");
#ifdef GRAFT_HAVE_OPENBLAS
  if (unrecognised) {
    if (!gotoblas_dynamic_init || !gotoblas_dynamic_quit) {
      std::printf("this OpenBLAS is not a DYNAMIC_ARCH build: nothing to simulate\n");
      return 1;
    }
    setenv("OPENBLAS_CORETYPE", "PRESCOTT", 1);
    gotoblas_dynamic_quit();
    gotoblas_dynamic_init();
    unsetenv("OPENBLAS_CORETYPE");
    std::printf("-- OpenBLAS on its fallback kernels (%s), as on a CPU it does not recognise:\n",
                interpreter::blas_kernels_now().c_str());
    run_all();
    interpreter::BlasState s = interpreter::repair_blas_core();
    std::printf("-- after graft's repair (%s):\n", s.note.c_str());
  }
#endif
  run_all();
  return 0;
}
