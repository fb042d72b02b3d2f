#!/usr/bin/env bash
# Runs N random programs through the differential test (tests/differential):
# the interpreter op by op against jit (interpreter and cpu backends) and a
# JSON round trip, bit for bit. Failures leave reproductions (graph.json and
# input_*.npy) in build/tests/tmp/differential/seed_N/.
#   scripts/differential.sh [N]     (default 100000; needs a build with tests)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-100000}
GRAFT_CACHE_DIR=$PWD/build/tests/tmp/kernel_cache GRAFT_DIFFERENTIAL_PROGRAMS=$n \
  ./build/tests/graft_tests "[differential]"
