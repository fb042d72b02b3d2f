#!/usr/bin/env bash
# examples/data_parallel under `mpirun -np 2` prints the loss curve the
# single-process run prints (the 4 devices split 2 per process).
#   data_parallel_mpi.sh MPIEXEC DATA_PARALLEL
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mpiexec=$1 example=$2
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# Under AddressSanitizer: Open MPI's own leaks are suppressed, which needs
# whole stacks (its plugins have no frame pointers). No effect otherwise.
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:fast_unwind_on_malloc=0"
export LSAN_OPTIONS="suppressions=$here/lsan_mpi.supp:print_suppressions=0"
losses() { awk '$1 ~ /^[0-9]+$/ { print $1, $3 }'; }
one=$("$example" | losses)
two=$("$mpiexec" --timeout 120 -np 2 "$example" | losses)
echo "one process:"; echo "$one"
echo "two processes:"; echo "$two"
[ -n "$one" ] && [ "$one" = "$two" ] && echo "the same loss curve in 1 and 2 processes"
