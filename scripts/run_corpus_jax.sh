#!/usr/bin/env bash
# Runs corpus/run_jax.py (the corpus against JAX) with the Python in
# GRAFT_JAX_PYTHON (default python3); exit status 77 (ctest: skipped) with a
# message when that Python cannot import jax, which graft never needs.
set -uo pipefail
python="${GRAFT_JAX_PYTHON:-python3}"
if ! "$python" -c "import jax, numpy" >/dev/null 2>&1; then
  echo "skipped: $python cannot import jax (set GRAFT_JAX_PYTHON to a Python with jax and numpy from PyPI)"
  exit 77
fi
exec "$python" "$(dirname "$0")/../corpus/run_jax.py" "$@"
