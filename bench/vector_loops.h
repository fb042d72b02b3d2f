// The hand-written references of bench/fusion: one OpenMP loop per
// elementwise chain, in vector_loops.cpp (built with -O3 -march=native
// -ffast-math, so that glibc's vector math library computes exp, tanh, sin).
#pragma once

#include <cstdint>

namespace vector_loops {

// y = (tanh(x*a + b)*c - exp(-x)) * x
void chain8(const float* x, float* y, int64_t n, float a, float b, float c);
// y = logistic(tanh(x*1.5 + 0.5)*x) - exp(x)*0.25, logistic(t) = 1/(1 + exp(-t))
void logistic_chain(const float* x, float* y, int64_t n);
// y = exp(sin(x)*2 + x) - x*0.5
void sin_chain(const float* x, float* y, int64_t n);
// The vector math library these loops call, for the report ("libmvec (glibc 2.36)").
const char* math_library();

}  // namespace vector_loops
