#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: builds graft, prints the driver and the
# device, and runs the cuda-labelled tests on the device (the kernels of every
# shape against the interpreter; devices, eager ops, jit, donation) and
# bench/cuda. Where no GPU exists it says so and exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1' && [ ! -e /usr/lib/x86_64-linux-gnu/libcuda.so.1 ]; then
  echo "gpu_check: no NVIDIA driver (libcuda.so.1) on this machine; nothing to check"
  exit 0
fi
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv || true
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DGRAFT_BUILD_TESTS=ON
cmake --build build -j"$(nproc)" --target graft_tests bench_cuda
unset GRAFT_CUDA_DRIVER
./build/tests/graft_tests "[cuda]" --success --reporter compact | grep -E "running on|no CUDA device|passed|failed" || true
# CUDA devices end to end on the real GPU (ctest runs the same cases on emulated devices),
# with fresh arrays on the host so the references are the CPU's ...
GRAFT_PLATFORMS=cpu ./build/tests/graft_tests "[cuda_devices]"
# ... and with the GPU as the default device, as it is on this machine.
./build/tests/graft_tests "[cuda_default]"
ctest --test-dir build -L cuda --output-on-failure
./build/bench/cuda
