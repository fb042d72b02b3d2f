#!/usr/bin/env bash
# Installs the Debian packages graft needs to build, test and run its examples.
# Idempotent: packages already present are skipped, so a second run is quick.
set -euo pipefail

packages=(
  cmake g++ make ccache pkg-config
  libboost-graph-dev      # Boost.Graph: topological order, reachability, Graphviz output
  libeigen3-dev           # Eigen: interpreter kernels
  nlohmann-json3-dev      # nlohmann/json: graph JSON schema
  catch2                  # Catch2 v2: the test suite
  zlib1g-dev              # zlib: gzipped pprof profiles
  libopenblas-openmp-dev  # OpenBLAS built on OpenMP (one thread pool with graft's kernels): dot_general
  libdnnl-dev             # oneDNN: bf16 products on AVX512-BF16/AMX-BF16 where the CPU has them
  graphviz                # dot: tests check that DOT output renders
  python3-numpy           # tests: .npy files written and read by NumPy
  python3-sklearn         # examples/train_digits: the 8x8 digits data set it ships
  golang-go               # go tool pprof: tests read graft's memory profiles with it
  openmpi-bin libopenmpi-dev  # Open MPI: pmap across processes (graft::distributed); mpirun runs its tests
  clang-format            # the style check of changed lines (scripts/check_format.sh)
  chromium                # headless Chromium: the browser test of graft-inspect's html view
  # clang 16 (the first Debian clang whose C++20 has std::source_location with
  # GCC 12's library) with its OpenMP, libFuzzer and sanitizer runtimes: the
  # consumer tests build against graft with it, and scripts/fuzz.sh uses it.
  clang-16 libomp-16-dev libclang-rt-16-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
