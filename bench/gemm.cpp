// f32 GEMM: graft's matmul beside the strongest references in one run:
// OpenBLAS called directly (with the kernels graft made it run), and Eigen
// compiled for this CPU (-march=native, this file). Goals: graft >= 0.9x the
// better reference, and >= 0.7x the machine's f32 FMA peak, measured here by
// a loop of independent FMAs on every thread (fma_peak).
//
//   ./build/bench/gemm                        this machine as it is
//   ./build/bench/gemm --as-unrecognised-cpu  first forces OpenBLAS onto its
//       Prescott fallback (what it picks on a CPU it does not know), times it,
//       then lets graft repair it: the before and after of that repair.
#include <Eigen/Core>
#include <omp.h>

#include <chrono>
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

// The f32 FMA peak of this machine as a program reaches it: every thread runs
// 12 independent chains of fused multiply-adds on the widest vectors this
// file is compiled for (-march=native), enough chains to cover the FMA
// latency of the pipes. Best of 5 runs, GFLOP/s.
#if defined(__AVX512F__)
constexpr int kLanes = 16;
#elif defined(__AVX__)
constexpr int kLanes = 8;
#else
constexpr int kLanes = 4;
#endif
typedef float Lanes __attribute__((vector_size(kLanes * sizeof(float))));

double fma_peak() {
  constexpr int kChains = 12;
  constexpr int64_t kIters = 20'000'000;
  double best = 0;
  for (int run = 0; run < 5; ++run) {
    const auto t0 = std::chrono::steady_clock::now();
    float sink = 0;
#pragma omp parallel reduction(+ : sink)
    {
      Lanes mul, add;
      for (int l = 0; l < kLanes; ++l) {
        mul[l] = 0.999999f;
        add[l] = 1e-7f * static_cast<float>(omp_get_thread_num() + 1);
      }
      // Twelve named chains (an array would live in memory).
      Lanes a0 = add, a1 = add * 2, a2 = add * 3, a3 = add * 4, a4 = add * 5, a5 = add * 6, a6 = add * 7,
            a7 = add * 8, a8 = add * 9, a9 = add * 10, a10 = add * 11, a11 = add * 12;
      for (int64_t i = 0; i < kIters; ++i) {
        a0 = a0 * mul + add;  // one FMA each (-ffp-contract=fast)
        a1 = a1 * mul + add;
        a2 = a2 * mul + add;
        a3 = a3 * mul + add;
        a4 = a4 * mul + add;
        a5 = a5 * mul + add;
        a6 = a6 * mul + add;
        a7 = a7 * mul + add;
        a8 = a8 * mul + add;
        a9 = a9 * mul + add;
        a10 = a10 * mul + add;
        a11 = a11 * mul + add;
        asm volatile("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5));  // not folded
      }
      const Lanes total = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11;
      for (int l = 0; l < kLanes; ++l) sink += total[l];
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (sink == 12345.0f) std::printf(" ");
    best = std::max(best, 2.0 * kChains * kLanes * static_cast<double>(kIters) * omp_get_max_threads() / s / 1e9);
  }
  return best;
}

double g_peak = 0;  // fma_peak(), measured once

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
  std::printf("%-44s %8.1f GF/s %8.1f GF/s %7.2fx\n", "  vs the measured FMA peak", gflops(flops, t_graft), g_peak,
              gflops(flops, t_graft) / g_peak);
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
  std::printf("Eigen reference built for this CPU (-march=native), %d threads\n", Eigen::nbThreads());
  g_peak = fma_peak();
  std::printf("f32 FMA peak, measured: %.1f GF/s (%d threads, %d-lane vectors)\n\n", g_peak, omp_get_max_threads(),
              kLanes);
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
