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
  graphviz                # dot: tests check that DOT output renders
  python3-numpy           # tests: .npy files written and read by NumPy
  golang-go               # go tool pprof: tests read graft's memory profiles with it
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
