#!/usr/bin/env bash
# ridge serve against published serving measurements (bench/serving_published.csv: TensorRT-LLM's first-token
# latencies and throughputs on A100, NeMo's Llama-2-7B request latencies on A100 and H100). Prints published vs
# ridge and the signed error per row, then the median |error|; fails on nothing. Extra arguments go to every
# `ridge serve` (default: --attention fused, as both engines use fused attention kernels).
# Usage: bench/serving_published.sh [RIDGE binary, default build/ridge] [serve options...]
set -euo pipefail
cd "$(dirname "$0")/.."
ridge=${1:-build/ridge}
shift || true
extra=("$@")
[[ ${#extra[@]} -gt 0 ]] || extra=(--attention fused)
rows=$(grep -v '^#' bench/serving_published.csv | while IFS=, read -r id model device batch prompt generate tp metric published source; do
  "$ridge" serve "$model" --device "$device" --batch "$batch" --prompt "$prompt" --generate "$generate" --tp "$tp" \
    "${extra[@]}" --format json | /usr/bin/python3 -c 'import json, sys
j = json.load(sys.stdin); metric, published = sys.argv[2], float(sys.argv[3])
v = float(j[metric] if metric in j else j["serve"][metric])
print("%-22s %-13s %-15s %12.4g vs %10.4g published  %+6.1f %%  (%s)" % (sys.argv[1], metric, sys.argv[5], v,
      published, 100 * (v - published) / published, sys.argv[4]))' "$id" "$metric" "$published" "$source" "$device"
done)
echo "$rows"
echo "$rows" | /usr/bin/python3 -c 'import re, statistics, sys
e = [abs(float(m.group(1))) for m in (re.search(r"([+-][0-9.]+) %", l) for l in sys.stdin) if m]
print("median |error| %.1f %% over %d rows; within 15 %%: %d" % (statistics.median(e), len(e), sum(x <= 15 for x in e)))'
