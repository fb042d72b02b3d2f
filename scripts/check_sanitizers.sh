#!/usr/bin/env bash
# The sanitizer pass of CI (.ci/run, the README's test command): builds graft,
# its tests, examples and fuzz targets with AddressSanitizer (leaks included)
# and UBSan (every finding aborts), runs the whole test suite, then each fuzz
# target on its seed corpus and on mutations of it for a fixed time
# (fuzz/standalone_main.cpp), then each under clang's coverage-guided
# libFuzzer for the same time (scripts/fuzz.sh).
#   scripts/check_sanitizers.sh [FUZZ_SECONDS]     (default 10 per target)
set -euo pipefail
cd "$(dirname "$0")/.."
fuzz_seconds=${1:-10}

./scripts/setup.sh
# The release build's kernel cache, where there is one (CI has just run its
# tests): generated modules do not depend on graft's build flags, so the
# sanitizer run loads them instead of compiling each again.
cache=()
if [ -d build/tests/tmp/kernel_cache ]; then cache=("-DGRAFT_TEST_KERNEL_CACHE=$PWD/build/tests/tmp/kernel_cache"); fi
# -O1 with line tables: reports name the line, builds and runs stay quick; asserts on.
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" \
  -DGRAFT_SANITIZE=ON -DGRAFT_BUILD_TESTS=ON -DGRAFT_BUILD_EXAMPLES=ON -DGRAFT_BUILD_BENCH=OFF "${cache[@]}" >/dev/null
SECONDS=0
cmake --build build-asan -j"$(nproc)"
echo "sanitizer pass: build took ${SECONDS} s"

export ASAN_OPTIONS=detect_leaks=1:detect_stack_use_after_return=0:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
SECONDS=0
ctest --test-dir build-asan -j"$(nproc)" --output-on-failure
echo "sanitizer pass: tests took ${SECONDS} s"

for t in from_json load_npy ops shape_spec corpus_case; do
  "./build-asan/fuzz/${t}_fuzzer" -seconds="$fuzz_seconds" "fuzz/corpus/$t"
done

# Coverage-guided: clang 16's libFuzzer runs each target for the same time on
# its seeds and the corpus earlier runs grew ($GRAFT_FUZZ_CORPUS, which CI may
# keep). A longer run is one command: scripts/fuzz.sh all 600.
SECONDS=0
./scripts/fuzz.sh all "$fuzz_seconds"
echo "sanitizer pass: libFuzzer took ${SECONDS} s"
echo "sanitizer pass: ok"
