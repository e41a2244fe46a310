#!/usr/bin/env bash
# resnet50 on an H200 (issue 18): fits the CNN calibration from the ncu profiles in tests/data/gpu/h200, checks it
# across models (fit on resnet50, predict the Llama kernels, and the reverse), and prints ridge's predicted time per
# step before calibration (the roofline upper bound) and after, next to the measured wall-clock median and the GPU
# kernel time of the same step (torch.profiler). Deterministic: it reads files, it times nothing.
#   bash bench/gpu/h200_cnn_check.sh [build/ridge] [--write]   (--write: refit data/calibrations/h200-bf16.json)
set -euo pipefail
RIDGE=${1:-build/ridge}
WRITE=${2:-}
H=tests/data/gpu/h200
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }

# One ingest per model: the two files of the training step and the inference pass are one resnet50 capture; the
# 2-layer Llama prefill and decode are one Llama capture (calibrate's leave-one-model-out groups by file).
"$RIDGE" ingest "$H/ncu_resnet50_train_bs64.csv" "$H/ncu_resnet50_train_bs64_rest.csv" "$H/ncu_resnet50_infer_bs256.csv" \
  --json "$T/resnet50.json" >/dev/null
"$RIDGE" ingest "$H/ncu_llama_prefill512.csv" "$H/ncu_llama_decode_bs1.csv" --json "$T/llama3-8b.json" >/dev/null

CAL=data/calibrations/h200-bf16.json
if [ "$WRITE" = "--write" ]; then
  "$RIDGE" calibrate "$T/resnet50.json" --device h200 --precision bf16 -o "$CAL" >/dev/null
  echo "wrote $CAL"
fi
echo "== Fit on both models, leave one model out (fit on resnet50 -> predict Llama, and the reverse)"
"$RIDGE" calibrate "$T/resnet50.json" "$T/llama3-8b.json" --device h200 --precision bf16 -o "$T/both.json" |
  sed -n '/Leave-one-model-out/,/^$/p'

# The reverse end to end: a fit on the Llama kernels alone predicts resnet50 (column "from Llama").
"$RIDGE" calibrate "$T/llama3-8b.json" --device h200 --precision bf16 -o "$T/llama-only.json" >/dev/null

echo "== resnet50 amp-bf16 on h200: predicted time per step vs measured (channels_last; ms)"
printf "%-12s %12s %12s %12s %12s %12s %10s %10s\n" case "upper bound" calibrated "from Llama" "GPU kernels" wall-clock \
  "cal/GPU" "cal/wall"
for c in "train 64" "train 256" "infer 1" "infer 256"; do
  set -- $c
  mode=$1 batch=$2
  flags="--batch $batch"
  [ "$mode" = train ] && flags="$flags --train"
  "$RIDGE" predict resnet50 --device h200 --precision amp-bf16 $flags --calibration none --format json >"$T/none.json"
  "$RIDGE" predict resnet50 --device h200 --precision amp-bf16 $flags --format json >"$T/cal.json"
  bound=$(json "$T/none.json" "d['total_time_s']*1e3")
  cal=$(json "$T/cal.json" "d['total_time_s']*1e3")
  "$RIDGE" predict resnet50 --device h200 --precision amp-bf16 $flags --calibration "$T/llama-only.json" --format json \
    >"$T/llama.json"
  from_llama=$(json "$T/llama.json" "d['total_time_s']*1e3")
  kind=$(json "$T/cal.json" "d['time_kind']")
  wall=$(python3 -c "import json; print(next(x['median_ms'] for x in json.load(open('$H/timings_resnet50.json')) if x['mode']=='$mode' and x['batch']==$batch and x['layout']=='channels_last'))")
  gpu=nan
  for f in "$H/torch_resnet50_${mode}_bs${batch}_trace.json" "$H/torch_resnet50_${mode}_bs${batch}_table.txt"; do
    if [ -f "$f" ]; then
      "$RIDGE" ingest "$f" --json "$T/gpu.json" >/dev/null
      gpu=$(json "$T/gpu.json" "d['totals']['kernel_time_s']*1e3")
      break
    fi
  done
  printf "%-12s %12.3f %12.3f %12.3f %12.3f %12.3f %10.2f %10.2f  %s\n" "$mode bs$batch" "$bound" "$cal" "$from_llama" "$gpu" "$wall" \
    "$(python3 -c "print($cal/$gpu)")" "$(python3 -c "print($cal/$wall)")" "$kind"
done

for cal in none builtin; do
  echo "== Per kernel family: profiled (ncu) vs predicted, --calibration $cal"
  "$RIDGE" ingest "$H/ncu_resnet50_train_bs64.csv" "$H/ncu_resnet50_train_bs64_rest.csv" --join sequence \
    --model resnet50 --batch 64 --train --device h200 --precision amp-bf16 --calibration $cal |
    sed -n '/Profiled vs predicted/,/^$/p'
  "$RIDGE" ingest "$H/ncu_resnet50_infer_bs256.csv" --model resnet50 --batch 256 --device h200 --precision amp-bf16 \
    --calibration $cal | sed -n '/Profiled vs predicted/,/^$/p'
done
