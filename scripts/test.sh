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
# Bounded fuzzing (crash inputs are kept as regression tests): ~1 minute for the ONNX loader, 8 s per profiler
# reader, 20 s for the config.json reader. The three scripts run at once (they share compiled objects under locks,
# scripts/fuzz-compile.sh, and each fuzzer runs on one core); each line they print names its fuzzer.
echo "== fuzzing the ONNX loader (60 s), the profiler readers (8 s each) and the config.json reader (20 s) at once" >&2
bash scripts/fuzz-onnx.sh 60 &
onnx_pid=$!
bash scripts/fuzz-ingest.sh 8 &
ingest_pid=$!
bash scripts/fuzz-llm-config.sh 20 || status=1
wait "$onnx_pid" || status=1
wait "$ingest_pid" || status=1
echo "test.sh: finished in $(( $(date +%s) - start )) s, status $status" >&2
exit $status
