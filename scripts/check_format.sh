#!/usr/bin/env bash
# Checks that the C++ lines a change touched follow .clang-format: the lines
# changed since $GRAFT_FORMAT_BASE (default HEAD~1, the latest commit) plus any
# uncommitted edits. Untouched code is left as it is, so the style spreads
# with each edit rather than in one reformatting commit. Prints the fix
# (`git clang-format <base>`) and the diff it would apply when a line is off.
# Outside a git checkout, or with no base commit, there is nothing to compare.
set -euo pipefail
cd "$(dirname "$0")/.."
base="${GRAFT_FORMAT_BASE:-HEAD~1}"
if ! git rev-parse --git-dir >/dev/null 2>&1 || ! git rev-parse -q --verify "${base}^{commit}" >/dev/null; then
  echo "check_format: no git history to compare against (${base}); skipped"
  exit 0
fi
if ! command -v git-clang-format >/dev/null || ! command -v clang-format >/dev/null; then
  echo "check_format: clang-format is not installed (scripts/setup.sh installs it)" >&2
  exit 1
fi
diff="$(git clang-format --diff --extensions cpp,h,cu "$base" -- . ':(exclude)tests/compile_fail' 2>&1 || true)"
case "$diff" in
  "" | *"no modified files to format"* | *"did not modify any files"*)
    echo "check_format: changed lines since ${base} follow .clang-format"
    ;;
  *)
    echo "check_format: changed lines since ${base} differ from .clang-format; run: git clang-format ${base}" >&2
    echo "$diff" >&2
    exit 1
    ;;
esac
