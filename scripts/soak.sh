#!/usr/bin/env bash
# The long run of the soak test (tests/runtime/soak_test.cpp) in full:
# STEPS jitted training steps (default 10^4) at batch sizes 1..1024, with
# callbacks and checkpoints; prints the memory figures it checked.
#   scripts/soak.sh [STEPS]        (after the README's build: build/tests/graft_tests)
set -euo pipefail
cd "$(dirname "$0")/.."
GRAFT_SOAK_STEPS=${1:-10000} ./build/tests/graft_tests "[soak]" -s 2>&1 | grep -e "^soak:" -e "passed" -e "failed" -e "FAILED" -A3
