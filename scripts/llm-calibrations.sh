#!/usr/bin/env bash
# Fits the shipped LLM operator calibrations (data/calibrations/llm/{a100,h100}-fp16.json) on Vidur's measured
# per-operator times of Llama-2-7B's layer (../shared/reference/measured/vidur, PROVENANCE.md there), then prints
# the hold-out checks quoted in docs/llm.md: each fit redone without some measurements and scored on them.
# Usage: scripts/llm-calibrations.sh [RIDGE binary, default build/ridge]
set -euo pipefail
cd "$(dirname "$0")/.."
ridge=${1:-build/ridge}
vidur=${VIDUR_DIR:-../shared/reference/measured/vidur}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for pair in a100:a100-sxm4-80gb h100:h100-sxm; do
  family=${pair%%:*} device=${pair#*:}
  csv=$vidur/${family}_Llama-2-7b-hf_mlp.csv
  "$ridge" calibrate "$csv" --device "$device" --precision fp16 --output "data/calibrations/llm/$family-fp16.json" \
    --format json >"$tmp/fit.json"
  for rule in "" "tp=8" "tokens>1024" "odd-tokens"; do
    "$ridge" calibrate "$csv" --device "$device" --precision fp16 ${rule:+--hold-out "$rule"} \
      --output "$tmp/cal.json" --format json >"$tmp/out.json"
    /usr/bin/python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
print("%-5s %-12s median |error| %5.1f %%   p90 %5.1f %%" % (sys.argv[2], sys.argv[3] or "in-sample",
      100 * j["median_abs_error"], 100 * j["p90_abs_error"]))' \
      "$tmp/out.json" "$family" "$rule"
  done
done
