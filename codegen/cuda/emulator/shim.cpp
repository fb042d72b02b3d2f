// What turns a generated CUDA module into host C++ for the emulated driver:
// CUDA's qualifiers become nothing (or `static thread_local` for __shared__:
// one copy per block, since a host thread runs one block at a time),
// threadIdx and friends read the running fibre's coordinates, and
// __syncthreads and the warp shuffles call into the emulator (fibres.h).
// The module's math is the host's libm.
#include "codegen/cuda/emulator/shim.h"

namespace graft::codegen::cuda::emulator {

extern const char kShim[] = R"(// ---- graft's CUDA emulator shim (codegen/cuda/emulator/shim.cpp)
#define GCG_EMULATED 1
// glibc's own math.h, not libstdc++'s <cmath>: the prelude calls the C names
// (sinf, sin), and <cmath> alone took 80 % of a module's compile time.
#define _GLIBCXX_INCLUDE_NEXT_C_HEADERS 1
#include <math.h>
#include <stdint.h>
#undef _GLIBCXX_INCLUDE_NEXT_C_HEADERS

#define GCG_EXPORT extern "C" __attribute__((visibility("default")))
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __restrict__ __restrict
#define __shared__ static thread_local

struct gcg_emu_dim3 {
  unsigned x, y, z;
};
struct gcg_emu_coords {
  gcg_emu_dim3 thread_idx, block_idx, block_dim, grid_dim;
};
struct gcg_emu_runtime {
  int32_t version;
  const gcg_emu_coords* (*coords)();
  void (*syncthreads)();
  uint64_t (*shfl_down)(uint64_t value, unsigned delta);
};
static const gcg_emu_runtime* gcg_emu = nullptr;

#define threadIdx (gcg_emu->coords()->thread_idx)
#define blockIdx (gcg_emu->coords()->block_idx)
#define blockDim (gcg_emu->coords()->block_dim)
#define gridDim (gcg_emu->coords()->grid_dim)

inline void __syncthreads() { gcg_emu->syncthreads(); }
template <class T>
inline T __shfl_down_sync(unsigned, T v, unsigned delta) {
  static_assert(sizeof(T) <= 8, "a shuffle moves at most 8 bytes");
  uint64_t bits = 0;
  __builtin_memcpy(&bits, &v, sizeof(T));
  bits = gcg_emu->shfl_down(bits, delta);
  T out;
  __builtin_memcpy(&out, &bits, sizeof(T));
  return out;
}

// The module loader (codegen/cpu/compiler.h) calls this with the CPU math
// table, which emulated kernels do not use.
GCG_EXPORT int graft_cpu_module_init(const void*) { return 0; }
GCG_EXPORT int graft_cuda_emulator_init(const void* rt) {
  const gcg_emu_runtime* r = static_cast<const gcg_emu_runtime*>(rt);
  if (r->version != GCG_EMU_VERSION) return 1;
  gcg_emu = r;
  return 0;
}
)";

}  // namespace graft::codegen::cuda::emulator
