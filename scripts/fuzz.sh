#!/usr/bin/env bash
# Builds graft's libFuzzer targets (fuzz/) with clang 16, ASan and UBSan, and
# runs them on their corpora.
#
#   scripts/fuzz.sh TARGET SECONDS [libFuzzer options...]   fuzz for SECONDS each
#   scripts/fuzz.sh merge TARGET                            fold new finds into the seeds
#   TARGET: from_json | load_npy | ops | shape_spec | corpus_case | all
#
# The corpus a run grows is $GRAFT_FUZZ_CORPUS/TARGET (default
# build-fuzz/corpus; CI may keep it between runs); every run also reads the
# committed seeds in fuzz/corpus/TARGET, which `merge` extends with the inputs
# of the grown corpus that reach new code (libFuzzer's -merge=1), to commit.
# A finding stops the run and leaves crash-*/leak-*/timeout-* in
# build-fuzz/findings/. The last lines printed are libFuzzer's: executions
# (#N), coverage (cov:) and features (ft:).
set -euo pipefail
cd "$(dirname "$0")/.."

all_targets=(from_json load_npy ops shape_spec corpus_case)
usage() { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
[ $# -ge 2 ] || usage
mode=run
if [ "$1" = merge ]; then mode=merge; shift; fi
target=$1
seconds=${2:-0}
shift $(($# >= 2 ? 2 : 1))
case " ${all_targets[*]} all " in
  *" $target "*) ;;
  *) echo "fuzz.sh: unknown target '$target' (${all_targets[*]} or all)" >&2; exit 2 ;;
esac
targets=("$target")
[ "$target" = all ] && targets=("${all_targets[@]}")
corpus_root=${GRAFT_FUZZ_CORPUS:-build-fuzz/corpus}

./scripts/setup.sh
cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-16 \
  -DGRAFT_BUILD_FUZZERS=ON -DGRAFT_BUILD_TESTS=OFF -DGRAFT_BUILD_EXAMPLES=OFF -DGRAFT_BUILD_BENCH=OFF >/dev/null
SECONDS=0
for t in "${targets[@]}"; do
  cmake --build build-fuzz -j"$(nproc)" --target "${t}_fuzzer"
done
echo "fuzz.sh: build took ${SECONDS} s"

# Leaks are findings; a graph or array that needs more than 2 GB is one too
# (graft's devices are capped far below that by fuzz_setup.h).
# (use-after-return detection is off: it made the runs 10x slower)
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1:detect_stack_use_after_return=0
status=0
for t in "${targets[@]}"; do
  mkdir -p "$corpus_root/$t" build-fuzz/findings
  if [ "$mode" = merge ]; then
    echo "== merging $corpus_root/$t into fuzz/corpus/$t"
    "./build-fuzz/fuzz/${t}_fuzzer" -merge=1 "fuzz/corpus/$t" "$corpus_root/$t" 2>&1 | tail -2 || status=1
    continue
  fi
  echo "== fuzzing $t for ${seconds}s"
  "./build-fuzz/fuzz/${t}_fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix=build-fuzz/findings/ "$@" \
    "$corpus_root/$t" "fuzz/corpus/$t" 2>&1 | grep -v -e "^#[0-9]*\s*\(NEW\|REDUCE\|pulse\)" -e "^\"" -e "^######" || status=1
done
exit $status
