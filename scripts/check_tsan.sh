#!/usr/bin/env bash
# ThreadSanitizer over graft's threaded parts: jit caches and executables
# under concurrent callers, eager ops from many threads, tiered compilation
# (the background compile thread), pmap's device threads and collectives.
#   scripts/check_tsan.sh
# Builds build-tsan/ (the library and the tests) and runs the test cases
# tagged [concurrency], [pmap] and [jit] (tiered compilation included) under TSan.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/setup.sh
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" \
  -DGRAFT_SANITIZE_THREAD=ON -DGRAFT_BUILD_TESTS=ON -DGRAFT_BUILD_EXAMPLES=OFF >/dev/null
cmake --build build-tsan -j"$(nproc)" --target graft_tests

# GCC's OpenMP runtime is not built with TSan, so its own synchronisation
# would read as races: kernels run on one OpenMP thread here, and the threads
# under test are graft's (callers, the compile thread, device threads).
export OMP_NUM_THREADS=1
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1"
export GRAFT_CACHE_DIR=$PWD/build-tsan/kernel_cache
status=0
for tag in "[concurrency]" "[pmap]" "[jit]"; do  # [jit] includes the tiered compilation tests
  echo "== $tag under ThreadSanitizer"
  ./build-tsan/tests/graft_tests "$tag" || status=1
done
[ $status -eq 0 ] && echo "thread sanitizer pass: ok"
exit $status
