#!/usr/bin/env bash
# Issue 14 point 4: fit ridge's all-reduce model (latency and bus bandwidth per configuration) on Vidur's
# measured NCCL times (../shared/reference/measured/vidur/{a100,h100}_dgx_all_reduce.csv), print the in-sample
# and leave-one-size-range-out errors, and the error of the data-sheet model (interconnect files, no fit).
# Writes the fit to data/calibrations/allreduce-vidur.json (the file the test AllReduceFit.VidurA100AndH100
# checks). Deterministic: it reads measurements, it does not time anything.
#
# usage: bench/allreduce_fit.sh [path/to/ridge_tests_model]   (default: build/ridge_tests_model)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
TESTS=${1:-$root/build/ridge_tests_model}
[ -x "$TESTS" ] || { echo "test binary not found at $TESTS (cmake --build build --target ridge_tests_model)"; exit 1; }
mkdir -p "$root/data/calibrations"
RIDGE_WRITE_ALLREDUCE_FIT="$root/data/calibrations/allreduce-vidur.json" \
  "$TESTS" --gtest_filter='AllReduceFit.VidurA100AndH100' | grep -E '^(fit|datasheet)|SKIPPED|FAILED|PASSED'
