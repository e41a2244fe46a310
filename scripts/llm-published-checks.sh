#!/usr/bin/env bash
# Prints ridge's errors against the published training measurements quoted in docs/llm.md: Megatron-LM (Narayanan
# et al. 2021, Table 1: per-GPU TFLOP/s = eq. 3 FLOPs / (iteration time x GPUs)) and Llama 2 (Touvron et al. 2023,
# Table 2: 184,320 A100-80GB GPU-hours for Llama-2-7B on 2.0T tokens), calibrated (default) and uncalibrated.
# Usage: scripts/llm-published-checks.sh [RIDGE binary, default build/ridge]
set -euo pipefail
cd "$(dirname "$0")/.."
ridge=${1:-build/ridge}
json() { "$ridge" train "$@" --device a100-sxm4-80gb --format json; }
while read -r model gpus tp pp batch published; do
  for cal in builtin none; do
    json "$model" --gpus "$gpus" --tp "$tp" --pp "$pp" --global-batch "$batch" --seq 2048 --recompute full \
      --calibration "$cal" | /usr/bin/python3 -c 'import json, sys
j = json.load(sys.stdin); gpus, published = int(sys.argv[3]), float(sys.argv[4])
v = float(j["train"]["megatron_formula_flops"]) / (j["iteration_time_s"] * gpus) / 1e12
print("%-14s %-8s %6.1f TFLOP/s per GPU vs %5.1f published: %+5.1f %%" % (sys.argv[1], sys.argv[2], v, published,
      100 * (v - published) / published))' "$model" "$cal" "$gpus" "$published"
  done
done <<'ROWS'
megatron-1.7b 32 1 1 512 137
megatron-18b 256 8 1 1024 135
megatron-145b 1536 8 8 2304 148
megatron-530b 2520 8 35 2520 163
megatron-1t 3072 8 64 3072 163
ROWS
for cal in builtin none; do
  for layout in "--zero 1 --recompute none" "--zero 3 --recompute selective" "--zero 3 --recompute full"; do
    for attention in eager fused; do
      # shellcheck disable=SC2086
      json llama-2-7b --gpus 1024 --seq 4096 --global-batch 1024 --micro-batch 1 --tokens 2e12 $layout \
        --attention "$attention" --calibration "$cal" | /usr/bin/python3 -c 'import json, sys
j = json.load(sys.stdin); h = j["train"]["days_for_budget"] * 24 * 1024
print("llama-2-7b %-8s %-32s %-6s fits %-5s %8.0f GPU-hours vs 184320: %+5.1f %%" % (sys.argv[1], sys.argv[2],
      sys.argv[3], j["fits"], h, 100 * (h - 184320) / 184320))' "$cal" "$layout" "$attention"
    done
  done
done
