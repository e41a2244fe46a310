#!/usr/bin/env bash
# Times `ridge ingest` of fixture 01 (1.7 MB ncu text log, 1,113 kernel records) as a whole process, JSON to
# /dev/null. Goal: under 50 ms. Prints min / median / max wall time over N runs (default 20).
# Usage: bench/ingest_bench.sh [RIDGE_BINARY (default build/ridge)] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
ridge="${1:-build/ridge}"
runs="${2:-20}"
file="${RIDGE_SHARED_DIR:-../shared}/fixtures/profiles/01_ncu_text_nyu_A100_resnet18_bs10_train_smsp_flops_dram.log"
[ -x "$ridge" ] || { echo "ingest_bench: $ridge not built" >&2; exit 1; }
[ -f "$file" ] || { echo "ingest_bench: fixture $file not found" >&2; exit 1; }
"$ridge" ingest "$file" --format json >/dev/null  # warm the page cache
times=()
for _ in $(seq "$runs"); do
  start=$(date +%s%N)
  "$ridge" ingest "$file" --format json >/dev/null
  end=$(date +%s%N)
  times+=($(( (end - start) / 1000 )))
done
printf '%s\n' "${times[@]}" | sort -n | awk -v runs="$runs" '{ t[NR] = $1 / 1000 }
  END { printf "ingest_bench: ridge ingest 01 (1.7 MB, 1,113 kernels), %d runs: min %.1f ms, median %.1f ms, max %.1f ms (goal < 50 ms)\n", NR, t[1], t[int((NR + 1) / 2)], t[NR] }'
