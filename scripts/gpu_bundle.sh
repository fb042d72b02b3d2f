#!/usr/bin/env bash
# Packs the built test binary and bench/cuda, with the shared libraries they
# load that a GPU machine without graft's Debian packages lacks, into one
# folder, so that `scripts/gpu_check.sh --prebuilt DIR` runs them there
# without building (such a machine has the CUDA driver but not Eigen, Boost,
# Catch2 or OpenBLAS). The C library, libstdc++ and libgcc stay the host's:
# the machine's own are as new or newer.
#   scripts/gpu_bundle.sh DIR     (after building graft_tests and bench_cuda in build/)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:?usage: scripts/gpu_bundle.sh DIR}
mkdir -p "$dir/lib"
cp build/tests/graft_tests build/bench/cuda "$dir/"
strip "$dir/graft_tests" "$dir/cuda"
for bin in "$dir/graft_tests" "$dir/cuda"; do
  ldd "$bin" | awk '/=> \// {print $3}' | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so* | libm.so* | libpthread.so* | libdl.so* | librt.so* | ld-linux* | libstdc++.so* | libgcc_s.so*) ;;
      *) [ -e "$dir/lib/$(basename "$lib")" ] || cp -L "$lib" "$dir/lib/" ;;
    esac
  done
done
du -sh "$dir"
