#!/usr/bin/env bash
# Benchmark (not a test): `ridge summary` for every zoo model, each timed as a whole process.
# Goal: the whole zoo in under 100 ms in total on a 2-core machine.
# Usage: bench/zoo_summary.sh [path/to/ridge]   (default build/ridge)
set -euo pipefail
ridge=${1:-"$(dirname "$0")/../build/ridge"}
models=$("$ridge" list --format csv | tail -n +2 | cut -d, -f1)
best_total=""
for round in 1 2 3 4 5; do
  start=$(date +%s%N)
  for m in $models; do "$ridge" summary "$m" --format json >/dev/null; done
  end=$(date +%s%N)
  total=$(( (end - start) / 1000 ))
  if [ -z "$best_total" ] || [ "$total" -lt "$best_total" ]; then best_total=$total; fi
done
n=$(echo "$models" | wc -w)
printf 'zoo_summary: %d models, best of 5 rounds: %.1f ms total, %.2f ms per model (whole processes)\n' \
  "$n" "$(echo "$best_total / 1000" | bc -l)" "$(echo "$best_total / 1000 / $n" | bc -l)"
