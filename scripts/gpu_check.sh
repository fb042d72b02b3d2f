#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: builds graft, prints the driver and the
# device, and runs the cuda-labelled tests on the device (the kernels of every
# shape against the interpreter; devices, eager ops, jit, donation) and
# bench/cuda. Where no GPU exists it says so and exits 0.
#   scripts/gpu_check.sh                  builds here (needs setup.sh's packages)
#   scripts/gpu_check.sh --prebuilt DIR   runs a folder made by scripts/gpu_bundle.sh
set -euo pipefail
cd "$(dirname "$0")/.."
prebuilt=
if [ "${1:-}" = --prebuilt ]; then prebuilt=$(cd "${2:?--prebuilt needs a folder}" && pwd); fi
if ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1' && [ ! -e /usr/lib/x86_64-linux-gnu/libcuda.so.1 ]; then
  echo "gpu_check: no NVIDIA driver (libcuda.so.1) on this machine; nothing to check"
  exit 0
fi
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv || true
unset GRAFT_CUDA_DRIVER
if [ -n "$prebuilt" ]; then
  export LD_LIBRARY_PATH="$prebuilt/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export GRAFT_CACHE_DIR=${GRAFT_CACHE_DIR:-/tmp/graft_gpu_check_cache}
  tests="$prebuilt/graft_tests" bench="$prebuilt/cuda"
else
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DGRAFT_BUILD_TESTS=ON
  cmake --build build -j"$(nproc)" --target graft_tests bench_cuda
  tests=./build/tests/graft_tests bench=./build/bench/cuda
fi
status=0
"$tests" "[cuda]" --success --reporter compact | grep -E "running on|no CUDA device|passed|failed|FAILED" || status=1
# CUDA devices end to end on the real GPU (ctest runs the same cases on emulated devices),
# with fresh arrays on the host so the references are the CPU's ...
GRAFT_PLATFORMS=cpu "$tests" "[cuda_devices]" || status=1
# ... and with the GPU as the default device, as it is on this machine.
"$tests" "[cuda_default]" || status=1
[ -n "$prebuilt" ] || ctest --test-dir build -L cuda --output-on-failure || status=1
"$bench" || status=1
exit $status
