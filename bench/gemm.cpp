// 1024^3 f32 matmul: graft's matmul vs OpenBLAS called directly (goal >= 0.95x).
#include <cstdio>
#include <memory>
#include <vector>

#include "graft/graft.h"
#include "timing.h"
#ifdef GRAFT_HAVE_OPENBLAS
#include <cblas.h>
#endif

using namespace graft;

int main() {
  const int n = 1024;
  Array a = full({n, n}, 0.5), b = full({n, n}, 0.25);
  Array warm = matmul(a, b);
  double t_graft = best_seconds([&] { Array c = matmul(a, b); });
  double flops = 2.0 * n * n * n;
  std::printf("%-36s %12s %12s %8s\n", "benchmark", "graft", "reference", "ratio");
#ifdef GRAFT_HAVE_OPENBLAS
  std::vector<float> va(n * n, 0.5f), vb(n * n, 0.25f), vc(n * n);
  double t_blas = best_seconds([&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, va.data(), n, vb.data(), n, 0.0f,
                vc.data(), n);
  });
  // The same call writing into a fresh buffer each time, as an eager op must
  // (first-touch page faults included): separates allocation from compute.
  double t_blas_fresh = best_seconds([&] {
    std::unique_ptr<float[]> out(new float[n * n]);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, va.data(), n, vb.data(), n, 0.0f,
                out.get(), n);
  });
  std::printf("%-36s %7.1f GF/s %7.1f GF/s %7.2fx\n", "matmul f32 1024^3 vs OpenBLAS", flops / t_graft / 1e9,
              flops / t_blas / 1e9, t_blas / t_graft);
  std::printf("%-36s %7.1f GF/s %7.1f GF/s %7.2fx\n", "  vs OpenBLAS into a fresh buffer", flops / t_graft / 1e9,
              flops / t_blas_fresh / 1e9, t_blas_fresh / t_graft);
#else
  std::printf("%-36s %7.1f GF/s %12s\n", "matmul f32 1024^3 (no OpenBLAS)", flops / t_graft / 1e9, "n/a");
#endif
  return 0;
}
