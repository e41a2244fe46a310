#!/usr/bin/env bash
# The whole test suite on a fresh Debian 12 machine: install packages (test tools included), build, run ctest,
# then the bounded fuzzing runs. Exit code is non-zero if anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
bash scripts/install-deps.sh --with-test-deps
bash scripts/build.sh
status=0
(cd build && ctest --output-on-failure -j 2 --timeout 600) || status=1
for fuzz in scripts/fuzz-*.sh; do
  [ -f "$fuzz" ] || continue
  echo "== $fuzz (bounded fuzzing)" >&2
  bash "$fuzz" || status=1
done
echo "test.sh: finished in $(( $(date +%s) - start )) s, status $status" >&2
exit $status
