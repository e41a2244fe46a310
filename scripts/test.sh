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
# reader, 20 s for the config.json reader.
echo "== fuzzing the ONNX loader (60 s)" >&2
bash scripts/fuzz-onnx.sh 60 || status=1
echo "== fuzzing the profiler readers (8 s each)" >&2
bash scripts/fuzz-ingest.sh 8 || status=1
echo "== fuzzing the Hugging Face config reader and the LLM graphs (20 s)" >&2
bash scripts/fuzz-llm-config.sh 20 || status=1
echo "test.sh: finished in $(( $(date +%s) - start )) s, status $status" >&2
exit $status
