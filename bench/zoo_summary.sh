#!/usr/bin/env bash
# Benchmark (not a test): `ridge summary` for every zoo model, each timed as a whole process, best of 5 rounds.
# Goal: the network zoo (every family but llm) in under 100 ms in total on a 2-core machine. The LLM entries (built
# from their configs: up to 76,000 ops for an MoE with 128 experts per layer) are timed too, without a goal.
# Usage: bench/zoo_summary.sh [path/to/ridge]   (default build/ridge)
set -euo pipefail
ridge=${1:-"$(dirname "$0")/../build/ridge"}
list=$("$ridge" list --format csv | tail -n +2)
networks=$(echo "$list" | awk -F, '$2 != "llm" {print $1}')
llms=$(echo "$list" | awk -F, '$2 == "llm" {print $1}')
# best_of MODELS: the best total over 5 rounds, in microseconds
best_of() {
  local best="" start end total
  for round in 1 2 3 4 5; do
    start=$(date +%s%N)
    for m in $1; do "$ridge" summary "$m" --format json >/dev/null 2>&1; done
    end=$(date +%s%N)
    total=$(( (end - start) / 1000 ))
    if [ -z "$best" ] || [ "$total" -lt "$best" ]; then best=$total; fi
  done
  echo "$best"
}
report() {  # NAME MODELS MICROSECONDS GOAL
  local n
  n=$(echo "$2" | wc -w)
  printf 'zoo_summary: %s: %d models, best of 5 rounds: %.1f ms total, %.2f ms per model (whole processes)%s\n' \
    "$1" "$n" "$(echo "$3 / 1000" | bc -l)" "$(echo "$3 / 1000 / $n" | bc -l)" "$4"
}
# The machine's floor: the same loop spawning /bin/true (on this workplace's VMs 1-2 ms a process)
floor=$(for round in 1 2 3 4 5; do
  start=$(date +%s%N); for m in $networks; do /bin/true "$m"; done; end=$(date +%s%N); echo $(( (end - start) / 1000 ))
done | sort -n | head -1)
report "networks" "$networks" "$(best_of "$networks")" " (goal < 100 ms total)"
report "/bin/true instead (process spawn floor)" "$networks" "$floor" ""
report "LLM configs" "$llms" "$(best_of "$llms")" ""
slowest=$(for m in $llms; do
  start=$(date +%s%N); "$ridge" summary "$m" --format json >/dev/null 2>&1; end=$(date +%s%N)
  echo "$(( (end - start) / 1000000 )) $m"
done | sort -rn | head -3 | awk '{printf "%s%s %s ms", (NR > 1 ? ", " : ""), $2, $1}')
echo "zoo_summary: slowest LLM entries (one run each): $slowest"
