// The strong hand-written reference for bench/fusion's elementwise chains: what
// a careful engineer writes by hand. One OpenMP loop per chain, `omp parallel
// for simd`, built (bench/CMakeLists.txt, this file only) with -O3
// -march=native -ffast-math -fopenmp. Under -ffast-math glibc's <math.h>
// declares expf, tanhf, sinf, ... `omp declare simd`, so GCC vectorises the
// loops with calls to libmvec's vector variants (_ZGVeN16v_expf,
// _ZGVdN8v_tanhf, ... by the vector width it picks); a plain -O3 loop would
// call the scalar functions once per element (the weak reference).
// Check: objdump -d build/bench/CMakeFiles/bench_fusion.dir/vector_loops.cpp.o | grep _ZGV
#include "vector_loops.h"

#include <math.h>

#include <cstdio>

#if !defined(__FAST_MATH__) || !defined(_OPENMP)
#error "vector_loops.cpp must be built with -ffast-math -fopenmp (libmvec's declarations depend on both)"
#endif

namespace vector_loops {

void chain8(const float* x, float* y, int64_t n, float a, float b, float c) {
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    y[i] = (tanhf(v * a + b) * c - expf(-v)) * v;
  }
}

void logistic_chain(const float* x, float* y, int64_t n) {
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    const float t = tanhf(v * 1.5f + 0.5f) * v;
    y[i] = 1.0f / (1.0f + expf(-t)) - expf(v) * 0.25f;
  }
}

void sin_chain(const float* x, float* y, int64_t n) {
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    y[i] = expf(sinf(v) * 2.0f + v) - v * 0.5f;
  }
}

const char* math_library() {
  static char text[64];
  std::snprintf(text, sizeof text, "libmvec (glibc %d.%d)", __GLIBC__, __GLIBC_MINOR__);
  return text;
}

}  // namespace vector_loops
