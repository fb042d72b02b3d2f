// dot_general's GEMM runs kernels for the CPU it is on, even where OpenBLAS
// does not recognise the CPU and falls back to its Prescott (SSE3) kernels.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>

#include <unistd.h>
#include <string>
#include <vector>

#include "graft/graft.h"
#include "interpreter/blas_core.h"
#include "support/shell.h"

using namespace graft;
using interpreter::better_blas_core;
using interpreter::CpuFeatures;

#ifdef GRAFT_HAVE_OPENBLAS
extern "C" {
char* openblas_get_corename(void);
void gotoblas_dynamic_init(void) __attribute__((weak));
void gotoblas_dynamic_quit(void) __attribute__((weak));
}
#endif

TEST_CASE("blas: the kernels to select for what OpenBLAS chose and what the CPU has", "[blas]") {
  const CpuFeatures baseline{}, avx2{true, false}, avx512{true, true};
  CHECK(better_blas_core("Prescott", avx512) == "SKYLAKEX");
  CHECK(better_blas_core("Prescott", avx2) == "HASWELL");
  CHECK(better_blas_core("Sandybridge", avx2) == "HASWELL");
  CHECK(better_blas_core("Nehalem", avx512) == "SKYLAKEX");
  CHECK(better_blas_core("Prescott", baseline).empty());  // nothing better to run
  CHECK(better_blas_core("SkylakeX", avx512).empty());
  CHECK(better_blas_core("Cooperlake", avx512).empty());
  CHECK(better_blas_core("Haswell", avx512).empty());  // AVX2 kernels are kept: not a fallback
  CHECK(better_blas_core("Zen", avx2).empty());
}

#ifdef GRAFT_HAVE_OPENBLAS
TEST_CASE("blas: a fallback to Prescott kernels is repaired, and matmul stays right", "[blas]") {
  if (!gotoblas_dynamic_init || !gotoblas_dynamic_quit) {
    WARN("OpenBLAS is not a DYNAMIC_ARCH build");
    return;
  }
  const CpuFeatures f = interpreter::cpu_features();
  if (!f.avx2_fma) {
    WARN("this CPU has no AVX2: Prescott's kernels are the right ones");
    return;
  }
  if (std::getenv("OPENBLAS_CORETYPE")) {
    WARN("OPENBLAS_CORETYPE is set by the user");
    return;
  }
  // Put OpenBLAS where it lands on a CPU it does not know.
  setenv("OPENBLAS_CORETYPE", "PRESCOTT", 1);
  gotoblas_dynamic_quit();
  gotoblas_dynamic_init();
  unsetenv("OPENBLAS_CORETYPE");
  REQUIRE(std::string(openblas_get_corename()) == "Prescott");

  interpreter::BlasState s = interpreter::repair_blas_core();
  CHECK(s.chosen_by_library == "Prescott");
  CHECK(s.running == (f.avx512 ? "SkylakeX" : "Haswell"));
  CHECK(std::string(openblas_get_corename()) == s.running);
  CHECK_THAT(s.note, Catch::Contains("OpenBLAS chose Prescott kernels"));
  CHECK(interpreter::repair_blas_core().note.empty());  // once repaired, nothing more to do

  // A GEMM through the re-selected kernels: integer-valued inputs, so exact.
  const int m = 67, k = 45, n = 33;
  std::vector<float> a(m * k), b(k * n);
  for (int i = 0; i < m * k; ++i) a[i] = static_cast<float>(i % 7 - 3);
  for (int i = 0; i < k * n; ++i) b[i] = static_cast<float>(i % 5 - 2);
  std::vector<float> c = matmul(array(a, {m, k}), array(b, {k, n})).to_vector<float>();
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      float want = 0;
      for (int p = 0; p < k; ++p) want += a[i * k + p] * b[p * n + j];
      REQUIRE(c[i * n + j] == want);
    }
}
#endif

TEST_CASE("blas: build_info names the CPU and the GEMM kernels in use", "[blas]") {
  const std::string info = build_info();
  CHECK_THAT(info, Catch::StartsWith("graft 0."));
  CHECK_THAT(info, Catch::Contains("CPU: " + interpreter::cpu_features_str(interpreter::cpu_features())));
  const interpreter::BlasState& s = interpreter::ensure_blas_core();
  CHECK_THAT(info, Catch::Contains("GEMM: " + s.library));
#ifdef GRAFT_HAVE_OPENBLAS
  CHECK_THAT(info, Catch::Contains(std::string(openblas_get_corename()) + " kernels"));
#endif
}

namespace {
double resident_mib() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return double(resident) * double(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}
}  // namespace

// Naming NVRTC, cuBLAS, cuSOLVER and cuFFT loaded them for good: 220 MB of
// resident memory on a machine with the toolkit and no GPU. They are named
// and unloaded now, loaded when a CUDA device uses them.
TEST_CASE("build_info: naming the CUDA libraries keeps none loaded", "[blas]") {
  graft::test::check_child_passes("", "[.child_build_info_rss]");
}

TEST_CASE("build_info (child): resident memory stays within 20 MB", "[.child_build_info_rss]") {
  (void)graft::ones({4}).to_vector<float>();  // graft's devices and BLAS up first: what any program has
  (void)interpreter::ensure_blas_core();
  const double before = resident_mib();
  const std::string info = build_info();
  const double after = resident_mib();
  INFO(info);
  INFO("resident " << before << " -> " << after << " MiB");
  CHECK(after - before < 20.0);
}
