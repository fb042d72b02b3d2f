// The CUDA kernel of random_bits (op_kernels.h): the interpreter's layout
// (interpreter/kernels/random.cpp) — for key b, words 2j and 2j+1 of its
// stream are threefry2x32(key_b, (hi(j), lo(j))) — one thread per pair of
// words, with threefry-2x32 (20 rounds, interpreter/kernels/threefry.h)
// written out in the kernel's text.
#include "codegen/cpu/cpp_text.h"
#include "codegen/cuda/op_kernels.h"
#include "ir/attr_access.h"

namespace graft::codegen::cuda::detail {

using cpu::detail::cat;
using cpu::detail::num;

namespace {

// Threefry-2x32, 20 rounds: rotations 13 15 26 6 / 17 29 16 24, a key
// injection after every four rounds, parity constant 0x1BD11BDA.
constexpr const char* kThreefry = R"(#ifndef GCG_THREEFRY
#define GCG_THREEFRY 1
GCG_FN uint32_t gcg_rotl32(uint32_t x, unsigned r) { return (x << r) | (x >> (32u - r)); }
GCG_FN void gcg_threefry2x32(uint32_t k0, uint32_t k1, uint32_t c0, uint32_t c1, uint32_t* y0, uint32_t* y1) {
  const unsigned rot[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  const uint32_t ks[3] = {k0, k1, 0x1BD11BDAu ^ k0 ^ k1};
  uint32_t x0 = c0 + ks[0], x1 = c1 + ks[1];
  for (unsigned block = 0; block < 5; ++block) {
    for (unsigned r = 0; r < 4; ++r) {
      x0 += x1;
      x1 = gcg_rotl32(x1, rot[(block % 2) * 4 + r]);
      x1 ^= x0;
    }
    const unsigned s = block + 1;
    x0 += ks[s % 3];
    x1 += ks[(s + 1) % 3] + s;
  }
  *y0 = x0;
  *y1 = x1;
}
#endif
)";

}  // namespace

std::optional<CudaKernel> random_kernel(const OpKernelRequest& r, std::string* why) {
  if (r.op != ir::Op::random_bits || r.inputs.at(0)->dtype != DType::u32 || r.outputs.at(0)->dtype != DType::u32) {
    *why = "random_bits takes u32 keys to u32 bits";
    return std::nullopt;
  }
  int64_t per_key = 1;
  for (int64_t d : ir::attr<ir::Ints>(r.attrs, "shape", r.op)) per_key *= d;
  const int64_t total = r.outputs[0]->num_elements();
  const int64_t pairs = per_key == 0 ? 0 : (total / per_key) * ((per_key + 1) / 2);
  std::string body;
  if (pairs > 0) {
    const int64_t per_pair_key = (per_key + 1) / 2;
    body = cat("  for (int64_t q = gcg_tid; q < p.n; q += gcg_stride) {\n",
               "    const int64_t b = q / ", num(per_pair_key), ", j = q % ", num(per_pair_key), ";\n",
               "    uint32_t w0, w1;\n",
               "    gcg_threefry2x32(p.in0[2 * b], p.in0[2 * b + 1], (uint32_t)((uint64_t)j >> 32), (uint32_t)j, &w0, &w1);\n",
               "    uint32_t* row = p.out0 + b * ", num(per_key), ";\n",
               "    row[2 * j] = w0;\n",
               "    if (2 * j + 1 < ", num(per_key), ") row[2 * j + 1] = w1;\n",
               "  }\n");
  }
  return frame_kernel(cat("random_bits of ", ir::type_str(*r.outputs[0])), r, pairs, body, kThreefry);
}

}  // namespace graft::codegen::cuda::detail
