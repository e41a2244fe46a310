#!/usr/bin/env bash
# Collects issue 18's GPU data on one NVIDIA GPU in one call (about 6 minutes on an H200): clocks and versions,
# a GEMM sweep and a bandwidth test, resnet50 and Llama-3-8B-shaped wall-clock timings with torch.profiler traces,
# Vidur-format per-operator times, and ncu profiles of one step each with the metrics `ridge profile-cmd --metrics
# flops,tensor,dram,cache,time` prints (bench/gpu/ncu_metrics.txt) plus the Hopper tensor-path counters the GPU
# lists. Everything lands in $OUT/gpu.tar.gz (split into 15 MB parts when larger); bench/gpu/unpack.sh trims it
# into tests/data/gpu/. Usage: OUT=dir [BUDGET_S=380] [PARTS="..."] bash bench/gpu/collect.sh
# PARTS (default "ceilings resnet llama vidur ncu"): also "decode" (decode steps with eager and flash attention) and
# "ncu-train-rest" (the resnet50 training step's kernels after the first TRAIN_SKIP, for a step cut by the cap).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
OUTDIR=${OUT:-/tmp/gpu-out}
W=/tmp/ridge-gpu
rm -rf "$W"; mkdir -p "$W" "$OUTDIR"
START=$(date +%s)
BUDGET=${BUDGET_S:-380}
PY=${PYTHON:-python3}
export PYTHONUNBUFFERED=1
left() { echo $((BUDGET - ($(date +%s) - START))); }
note() { echo "[$(($(date +%s) - START))s] $*" | tee -a "$W/driver.log" >&2; }

# run_part NAME MAX_S CMD...: runs CMD for at most MAX_S seconds and never past the budget (less 30 s to pack).
run_part() {
  local name=$1 max=$2; shift 2
  local l=$(($(left) - 30)); local t=$((l < max ? l : max))
  if [ "$t" -lt 15 ]; then note "skip $name (no time left)"; return 1; fi
  note "start $name (limit ${t}s)"
  local s=$(date +%s)
  timeout -s TERM "$t" "$@" >>"$W/log_$name.txt" 2>&1
  local rc=$?
  note "end $name rc=$rc $(($(date +%s) - s))s"
  return $rc
}

env_facts() {
  nvidia-smi --query-gpu=name,driver_version,pci.bus_id,memory.total,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,power.limit,power.draw,temperature.gpu,persistence_mode,compute_mode --format=csv
  nvidia-smi -q -d CLOCK,POWER,PERFORMANCE
  $PY -c 'import torch, sys; print("python", sys.version.split()[0]); print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version()); p=torch.cuda.get_device_properties(0); print("device", p.name, "sms", p.multi_processor_count, "mem", p.total_memory, "l2", getattr(p, "L2_cache_size", None))'
  $PY -c 'import torchvision, transformers; print("torchvision", torchvision.__version__, "transformers", transformers.__version__)'
  ncu --version
  uname -a
}

note "collect on $(hostname), budget ${BUDGET}s"
env_facts >"$W/env.txt" 2>&1
nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv >"$W/clocks_before.csv" 2>&1
PARTS=${PARTS:-ceilings resnet llama vidur ncu}
want() { [[ " $PARTS " == *" $1 "* ]]; }
if want ncu || want ncu-train-rest; then
  ncu --query-metrics >"$W/ncu_query_metrics.txt" 2>&1 || note "ncu --query-metrics failed"
fi

want ceilings && run_part ceilings 90 $PY "$HERE/collect.py" ceilings --out "$W"
want resnet && run_part resnet 100 $PY "$HERE/collect.py" resnet --out "$W"
want llama && run_part llama 90 $PY "$HERE/collect.py" llama --out "$W"
want decode && run_part decode 90 $PY "$HERE/collect.py" decode --out "$W"
want vidur && run_part vidur 90 $PY "$HERE/collect.py" vidur --out "$W" --tag "${VIDUR_TAG:-}"
nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv >"$W/clocks_after_timings.csv" 2>&1

# ncu metric lists: ridge's groups, then the Hopper tensor-path counters; each kept only if this GPU lists it.
known() { grep -qE "^[[:space:]]*$1([[:space:]]|$)" "$W/ncu_query_metrics.txt"; }
filter() {
  local out="" m
  for m in "$@"; do
    if [ ! -s "$W/ncu_query_metrics.txt" ] || known "${m%.sum}"; then out="$out,$m"; else note "metric $m not listed by this GPU: dropped"; fi
  done
  echo "${out#,}"
}
BASE=$(tr ',' ' ' <"$HERE/ncu_metrics.txt")
HOPPER_ALL=$(grep -oE '^[[:space:]]*sm__(ops_path_tensor_src_[a-z0-9_]+|inst_executed_pipe_tensor[a-z0-9_]*)' "$W/ncu_query_metrics.txt" 2>/dev/null |
  tr -d ' ' | grep -v sparsity | sort -u | sed 's/$/.sum/' | tr '\n' ' ')
HOPPER_MODEL=$(echo "$HOPPER_ALL" | tr ' ' '\n' | grep -E 'src_(bf16|fp16|tf32)_dst_fp32|src_fp16_dst_fp16|pipe_tensor(_op_(hmma|gmma))?\.sum' | tr '\n' ' ')
METRICS_ALL=$(filter $BASE $HOPPER_ALL)
METRICS_MODEL=$(filter $BASE $HOPPER_MODEL)
echo "$METRICS_ALL" >"$W/ncu_metrics_gemm.txt"
echo "$METRICS_MODEL" >"$W/ncu_metrics_model.txt"

ncu_run() {  # ncu_run NAME MAX_S METRICS [--launch-count N] -- workload args
  local name=$1 max=$2 metrics=$3; shift 3
  local extra=()
  while [ "$1" != "--" ]; do extra+=("$1"); shift; done; shift
  echo "ncu --target-processes all --profile-from-start off --clock-control none --nvtx ${extra[*]} --metrics $metrics --csv --print-units base --log-file $W/ncu_$name.csv $PY collect.py workload $*" >"$W/ncu_$name.cmd"
  run_part "ncu_$name" "$max" ncu --target-processes all --profile-from-start off --clock-control none --nvtx "${extra[@]}" \
    --metrics "$metrics" --csv --print-units base --log-file "$W/ncu_$name.csv" $PY "$HERE/collect.py" workload --out "$W" "$@"
}
kernels_in() { $PY - "$1" <<'EOF'
import csv, sys
ids = set()
try:
    for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("==")):
        ids.add(r.get("ID"))
except Exception:
    pass
print(len(ids - {None}))
EOF
}

if want ncu-train-rest; then
  ncu_run resnet50_train_bs64_rest 240 "$METRICS_MODEL" --launch-skip "${TRAIN_SKIP:-585}" --launch-count 2000 -- \
    --what resnet-train --batch 64
fi
if want ncu; then
  s=$(date +%s)
  ncu_run gemm 60 "$METRICS_ALL" -- --what gemm
  note "ncu gemm: $(kernels_in "$W/ncu_gemm.csv") kernels in $(($(date +%s) - s))s"
  ncu_run llama_decode_bs1 45 "$METRICS_MODEL" -- --what llama-decode --batch 1 --tokens 512 --layers 2
  ncu_run llama_prefill512 45 "$METRICS_MODEL" -- --what llama-prefill --batch 1 --tokens 512 --layers 2
  ncu_run resnet50_infer_bs256 70 "$METRICS_MODEL" -- --what resnet-infer --batch 256
  # The training step last, with a kernel cap sized from the rate of the runs above (the step is cut, not lost).
  k=$(($(kernels_in "$W/ncu_llama_decode_bs1.csv") + $(kernels_in "$W/ncu_llama_prefill512.csv") + $(kernels_in "$W/ncu_resnet50_infer_bs256.csv")))
  spent=$(($(date +%s) - s))
  avail=$(($(left) - 30 - 25))
  cap=$($PY -c "k=$k; spent=$spent; avail=$avail; rate=max(0.05,(spent-4*12)/max(k,1)); print(max(50,int(avail/rate)))")
  note "resnet50 train ncu: $k kernels took ${spent}s so far; cap $cap kernels"
  ncu_run resnet50_train_bs64 200 "$METRICS_MODEL" --launch-count "$cap" -- --what resnet-train --batch 64
fi
nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv >"$W/clocks_after.csv" 2>&1

note "packing"
(cd "$W" && tar czf "$OUTDIR/gpu.tar.gz" .)
sz=$(stat -c %s "$OUTDIR/gpu.tar.gz")
if [ "$sz" -gt 15728640 ]; then
  (cd "$OUTDIR" && split -b 15m -d gpu.tar.gz gpu.tar.gz.part && rm gpu.tar.gz)
fi
cp "$W/driver.log" "$OUTDIR/driver.log"
ls -la "$OUTDIR"
echo "---- summary"
$PY - "$W" <<'EOF'
import json, os, sys
w = sys.argv[1]
def load(n):
    try:
        return json.load(open(os.path.join(w, n)))
    except Exception as e:
        print(n, "missing:", e); return None
c = load("ceilings.json")
if c:
    for b in c.get("bandwidth", []): print(f"bw {b['kind']}: {b['gb_per_s_at_median']:.0f} GB/s")
    for g in c.get("gemm", []):
        if g["label"].startswith("square") and g["m"] in (4096, 8192): print(f"gemm {g['dtype']} {g['m']}: {g['tflops_per_s_at_median']:.0f} TFLOP/s")
r = load("timings_resnet50.json") or []
for x in r: print("resnet50", x.get("mode"), x.get("batch"), x.get("layout"), round(x.get("median_ms", -1), 3), "ms", x.get("error", ""))
l = load("timings_llama3_8b.json") or []
for x in l: print("llama", x.get("phase"), x.get("batch"), x.get("tokens"), x.get("attn"), x.get("logits"), round(x.get("median_ms", -1), 3), "ms", x.get("error", ""))
for f in sorted(os.listdir(w)):
    print(f"{os.path.getsize(os.path.join(w, f)):>10} {f}")
EOF
