// bf16 matrix products on the CPU's bf16 instructions (AVX512-BF16, AMX-BF16)
// through oneDNN's matmul primitive, where the CPU has them: what JAX's bf16
// products cost in f32 there runs at the bf16 units' rate. Elsewhere graft
// widens bf16 operands to f32 and uses OpenBLAS (interpreter/kernel.cpp).
#pragma once

#include <cstdint>
#include <string>

namespace graft::interpreter {

// Whether bf16 products run on bf16 instructions here: oneDNN is built in,
// the CPU has AVX512-BF16 or AMX-BF16, and GRAFT_BF16_GEMM is not "f32" (the
// tests compare the two paths).
bool bf16_gemm_native();

// How bf16 products run, for build_info(): "oneDNN 2.6.3 (AMX-BF16)", or
// "widened to f32" and why.
std::string bf16_gemm_description();

// C[b] = op(A[b]) op(B[b]) for each of `batch` row-major products, A [M,K]
// (stored [K,M] when ta), B [K,N] (stored [N,K] when tb), bf16 bits;
// C [M,N] f32, or bf16 rounded to nearest even when c_bf16. Sums in f32.
// False when oneDNN declines (then nothing was written).
bool bf16_matmul(int64_t batch, int64_t m, int64_t n, int64_t k, const uint16_t* a, const uint16_t* b, bool ta, bool tb,
                 void* c, bool c_bf16);

}  // namespace graft::interpreter
