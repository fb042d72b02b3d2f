// The emulated CUDA device's execution engine: every CUDA thread of a block
// is a fibre (ucontext) on the launching host thread, with its own
// threadIdx/blockIdx. Blocks run one after another; inside a block the
// fibres take turns, each running until it reaches __syncthreads, a warp
// shuffle, or its end. A barrier releases when every thread of the block
// waits at it, a shuffle when every thread of the warp does; a thread that
// returns while others wait at a barrier (or its warp's shuffle) is the
// divergence a GPU would hang or corrupt on: the launch fails naming the
// kernel, the block and how many threads arrived.
//
// Generated kernels reach it through Runtime (the shim's gcg_emu_runtime,
// codegen/cuda/emulator/shim.cpp), handed to each module when it is loaded.
#pragma once

#include <cstdint>
#include <string>

namespace graft::codegen::cuda::emulator {

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

struct Coords {
  Dim3 thread_idx, block_idx, block_dim, grid_dim;
};

// Layout mirrored by gcg_emu_runtime in the shim.
struct Runtime {
  int32_t version;
  const Coords* (*coords)();  // the running CUDA thread's
  void (*syncthreads)();
  uint64_t (*shfl_down)(uint64_t value, unsigned delta);  // the value of lane + delta (own value past the warp)
};
inline constexpr int32_t kRuntimeVersion = 1;
inline constexpr unsigned kWarpSize = 32;

const Runtime& runtime();

// A kernel's host entry: <symbol>_emulated(params) (codegen/cuda/emit.h).
using Entry = void (*)(const void* params);

// Runs `entry` on a grid of `grid` blocks of `block` threads (1-D). Throws
// graft::Error when the threads of a block do not all reach a barrier.
void launch(Entry entry, const void* params, unsigned grid, unsigned block, const std::string& kernel);

}  // namespace graft::codegen::cuda::emulator
