// Products through oneDNN's matmul and convolution primitives: bf16 ones on
// the CPU's bf16 instructions (AVX512-BF16, AMX-BF16) where it has them, so
// that what JAX's bf16 products cost in f32 there runs at the bf16 units'
// rate (elsewhere graft widens bf16 operands to f32 for OpenBLAS and its own
// convolution kernel: interpreter/kernel.cpp); and f32 convolutions on
// AVX-512 CPUs, where oneDNN's direct kernels beat graft's im2col GEMMs.
#pragma once

#include <cstdint>
#include <string>

namespace graft::interpreter {

// Products (GEMMs, convolutions) of this many multiply-adds go to a library
// (OpenBLAS, and oneDNN for bf16); smaller ones amortise no call: Eigen, or
// graft's own kernels, widened to f32 for bf16.
constexpr int64_t kGemmMinWork = 32 * 32 * 32;

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

// A convolution for onednn_conv: logical sizes, and each operand's element
// strides in oneDNN's dimension order (lhs and output: batch, feature,
// spatial...; rhs: output feature, input feature, spatial...).
struct OnednnConvShape {
  int spatial = 0;   // 1 to 3
  bool f32 = false;  // operands f32 (else bf16 bits)
  int64_t batch = 0, in_features = 0, out_features = 0, groups = 1;
  int64_t in[3] = {}, window[3] = {}, out[3] = {}, stride[3] = {}, rhs_dilation[3] = {}, pad_low[3] = {},
          pad_high[3] = {};
  int64_t lhs_strides[5] = {}, rhs_strides[5] = {}, out_strides[5] = {};
  // The rhs's stride from one group's output features to the next (0: the
  // output feature stride times the features per group).
  int64_t rhs_group_stride = 0;
  // The backward-data pass of this convolution instead: `lhs` holds the
  // gradient of its output (laid out by out_strides) and `out` receives that
  // of its input (by lhs_strides): a transposed convolution.
  bool backward_data = false;
  // The groups split the lhs's batch, not its features (batch_group_count:
  // a grouped convolution's weight gradient); the output's features too.
  bool batch_groups = false;
};

// A convolution (no lhs dilation) of bf16 or f32 operands on oneDNN's
// convolution primitives, or its backward-data pass; the output f32, or
// bf16 rounded to nearest even when out_bf16 (bf16 operands only). Sums in
// f32. False when oneDNN declines (the caller then computes it all).
bool onednn_conv(const OnednnConvShape& shape, const void* lhs, const void* rhs, void* out, bool out_bf16);

// Whether onednn_conv runs `shape` as oneDNN's backward-weights pass of
// the convolution whose weight gradient it is (a window larger than the
// output, or batch groups): its input is then our lhs, its output
// gradient our rhs, with our rhs dilation its stride and our stride its
// dilation.
bool onednn_conv_as_backward_weights(const OnednnConvShape& shape);

// Whether f32 convolutions run on oneDNN here: built with it, on a CPU
// with AVX-512 (where its direct kernels ran 1.2-2x faster than graft's
// own in bench/conv), and GRAFT_F32_CONV is not "graft" (the tests compare
// the two paths).
bool f32_conv_on_onednn();

// How f32 convolutions run, for build_info().
std::string f32_conv_description();

}  // namespace graft::interpreter
