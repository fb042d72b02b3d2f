#include "interpreter/blas_core.h"

#include <array>
#include <cstdio>
#include <cstdlib>

#ifdef GRAFT_HAVE_OPENBLAS
// OpenBLAS's own entry points. The dynamic-dispatch pair exists only in
// DYNAMIC_ARCH builds (Debian's), so it is declared weak: absent, nothing is
// re-selected.
extern "C" {
char* openblas_get_corename(void);
char* openblas_get_config(void);
void gotoblas_dynamic_init(void) __attribute__((weak));
void gotoblas_dynamic_quit(void) __attribute__((weak));
}
#endif

namespace graft::interpreter {
namespace {

bool one_of(std::string_view name, std::initializer_list<std::string_view> names) {
  for (std::string_view n : names)
    if (name == n) return true;
  return false;
}

}  // namespace

std::string better_blas_core(std::string_view chosen, const CpuFeatures& f) {
  // OpenBLAS 0.3.21's names (openblas_get_corename) of kernels that use
  // AVX-512, and of those that use at least AVX2 + FMA.
  const bool has_avx512_kernels = one_of(chosen, {"SkylakeX", "Cooperlake", "SapphireRapids"});
  const bool has_avx2_kernels = has_avx512_kernels || one_of(chosen, {"Haswell", "Zen"});
  if (f.avx512 && !has_avx2_kernels) return "SKYLAKEX";
  if (f.avx2_fma && !has_avx2_kernels) return "HASWELL";
  return {};
}

BlasState repair_blas_core() {
  BlasState state;
#ifdef GRAFT_HAVE_OPENBLAS
  state.library = "OpenBLAS";
  if (const char* config = openblas_get_config()) {
    std::string_view c(config);  // "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH ... USE_OPENMP ..."
    state.library = std::string(c.substr(0, c.find(' ', 9)));
    if (c.find("USE_OPENMP") != std::string_view::npos) state.library += " (OpenMP)";
  }
  state.chosen_by_library = openblas_get_corename();
  state.running = state.chosen_by_library;
  const CpuFeatures f = cpu_features();
  const std::string better = better_blas_core(state.chosen_by_library, f);
  if (better.empty()) return state;
  if (const char* user = std::getenv("OPENBLAS_CORETYPE"); user && *user) {
    state.note = "OPENBLAS_CORETYPE=" + std::string(user) + " is the user's: kept";
    return state;
  }
  if (!gotoblas_dynamic_init || !gotoblas_dynamic_quit) {
    state.note = "this OpenBLAS cannot re-select its kernels (not a DYNAMIC_ARCH build)";
    return state;
  }
  // Re-initialising reads OPENBLAS_CORETYPE; it is set only for that call.
  setenv("OPENBLAS_CORETYPE", better.c_str(), 1);
  gotoblas_dynamic_quit();
  gotoblas_dynamic_init();
  unsetenv("OPENBLAS_CORETYPE");
  state.running = openblas_get_corename();
  state.note = "OpenBLAS chose " + state.chosen_by_library + " kernels on a CPU with " + cpu_features_str(f) +
               "; graft selected " + state.running;
  std::fprintf(stderr, "graft: %s\n", state.note.c_str());
#else
  state.library = "Eigen";
  state.chosen_by_library = state.running = "Eigen (built for baseline x86-64)";
#endif
  return state;
}

std::string blas_kernels_now() {
#ifdef GRAFT_HAVE_OPENBLAS
  return openblas_get_corename();
#else
  return "Eigen (built for baseline x86-64)";
#endif
}

const BlasState& ensure_blas_core() {
  static const BlasState state = repair_blas_core();  // thread-safe, once
  return state;
}

namespace {
// At load, while the process is most likely single-threaded (re-selecting
// sets an environment variable for a moment); dot_general checks again.
[[maybe_unused]] const bool kBlasCoreAtLoad = (ensure_blas_core(), true);
}  // namespace

}  // namespace graft::interpreter
