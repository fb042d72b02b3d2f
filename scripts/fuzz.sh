#!/usr/bin/env bash
# Builds graft's libFuzzer targets (fuzz/) with clang, ASan and UBSan, and runs
# one of them for SECONDS seconds on its committed seed corpus.
#
#   scripts/fuzz.sh TARGET SECONDS [libFuzzer options...]
#   TARGET: from_json | load_npy | ops | all
#
# New inputs that reach new code go to build-fuzz/corpus/TARGET (the committed
# seeds in fuzz/corpus/TARGET are read, never written). A finding stops the run
# and leaves crash-*/leak-*/timeout-* in build-fuzz/findings/. The last lines
# printed are libFuzzer's: executions (#N), coverage (cov:) and features (ft:).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -lt 2 ]; then
  sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
target=$1
seconds=$2
shift 2
case "$target" in
  from_json|load_npy|ops|all) ;;
  *) echo "fuzz.sh: unknown target '$target' (from_json, load_npy, ops or all)" >&2; exit 2 ;;
esac

./scripts/setup.sh
cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-16 \
  -DGRAFT_BUILD_FUZZERS=ON -DGRAFT_BUILD_TESTS=OFF -DGRAFT_BUILD_EXAMPLES=OFF >/dev/null

targets=("$target")
[ "$target" = all ] && targets=(from_json load_npy ops)
for t in "${targets[@]}"; do
  cmake --build build-fuzz -j"$(nproc)" --target "${t}_fuzzer"
done

status=0
for t in "${targets[@]}"; do
  mkdir -p "build-fuzz/corpus/$t" build-fuzz/findings
  echo "== fuzzing $t for ${seconds}s"
  # Leaks are findings; a graph or array that needs more than 2 GB is one too
  # (graft's devices are capped far below that by fuzz_setup.h).
  # (use-after-return detection is off: it made the runs 10x slower)
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1:detect_stack_use_after_return=0 \
    "./build-fuzz/fuzz/${t}_fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix=build-fuzz/findings/ "$@" \
      "build-fuzz/corpus/$t" "fuzz/corpus/$t" 2>&1 | grep -v -e "^#[0-9]*\s*\(NEW\|REDUCE\|pulse\)" -e "^\"" -e "^######" || status=1
done
exit $status
