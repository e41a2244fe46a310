#!/usr/bin/env bash
# ridge train against published training measurements with stated layouts (bench/training_published.csv: Megatron-LM
# Table 1, Megatron-Turing NLG 530B iteration times, llm-foundry's MPT throughput tables). Prints, per row, ridge's
# prediction, the published figure and the signed error, then the median |error| and how many rows are within 15 %,
# overall and per source; fails on nothing. Extra arguments go to every `ridge train` (e.g. --calibration none).
# Usage: bench/training_published.sh [RIDGE binary, default build/ridge] [train options...]
set -euo pipefail
cd "$(dirname "$0")/.."
ridge=${1:-build/ridge}
shift || true
extra=("$@")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# An MPT shape (mpt:D:H:L) as an OPT-style config.json at sequence length S (see the CSV's header).
mpt_config() {
  local h=$1 a=$2 l=$3 s=$4 f="$tmp/mpt-$1-$2-$3-$4.json"
  [[ -e $f ]] || printf '{"model_type":"opt","vocab_size":50368,"hidden_size":%d,"num_hidden_layers":%d,"num_attention_heads":%d,"ffn_dim":%d,"max_position_embeddings":%d,"enable_bias":true,"activation_function":"gelu","tie_word_embeddings":true}\n' \
    "$h" "$l" "$a" $((4 * h)) "$s" > "$f"
  echo "$f"
}
rows=$(grep -v '^#' bench/training_published.csv | while IFS=, read -r id model device gpus tp pp zero recompute attention seq batch micro metric published source flags; do
  read -r -a row_flags <<<"${flags:-}"
  if [[ $model == mpt:* ]]; then
    IFS=: read -r _ h a l <<<"$model"
    model=$(mpt_config "$h" "$a" "$l" "$seq")
  fi
  "$ridge" train "$model" --device "$device" --gpus "$gpus" --tp "$tp" --pp "$pp" --zero "$zero" --recompute "$recompute" \
    --attention "$attention" --seq "$seq" --global-batch "$batch" --micro-batch "$micro" ${row_flags[@]+"${row_flags[@]}"} ${extra[@]+"${extra[@]}"} \
    --format json | /usr/bin/python3 -c 'import json, sys
j = json.load(sys.stdin); rid, metric, published, source, gpus = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4], int(sys.argv[5])
t = j["iteration_time_s"]
v = {"iteration_time_s": t, "tokens_per_s_per_gpu": j["tokens_per_s"] / gpus,
     "megatron_tflops_per_gpu": float(j["train"]["megatron_formula_flops"]) / (t * gpus) / 1e12,
     "model_tflops_per_gpu": float(j["train"]["model_flops"]) / (t * gpus) / 1e12}[metric]
print("%-36s %-24s %10.4g vs %10.4g published  %+6.1f %%  fits %-5s (%s)" % (rid, metric, v, published,
      100 * (v - published) / published, j["fits"], source))' "$id" "$metric" "$published" "$source" "$gpus"
done)
echo "$rows"
echo "$rows" | /usr/bin/python3 -c 'import re, statistics, sys
rows = [(m.group(2), abs(float(m.group(1)))) for m in (re.search(r"([+-][0-9.]+) %.*\((\S+)\)$", l) for l in sys.stdin) if m]
def line(name, e):
    print("%-12s median |error| %5.1f %% over %3d rows; within 15 %%: %3d; within 10 %%: %3d" % (name, statistics.median(e),
          len(e), sum(x <= 15 for x in e), sum(x <= 10 for x in e)))
for s in sorted({s for s, _ in rows}): line(s, [e for t, e in rows if t == s])
line("all", [e for _, e in rows])'
