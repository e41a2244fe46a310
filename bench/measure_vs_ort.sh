#!/usr/bin/env bash
# ridge measure --end-to-end vs ONNX Runtime (CPU build of the npm package onnxruntime-node), same ONNX files
# with the same kind of random weights, 2 intra-op threads, side by side. A benchmark, not a test: it prints
# numbers (and the load average: on a busy machine they are only indicative).
# Usage: bench/measure_vs_ort.sh [BUILD_DIR] [MODELS] [BATCHES]
#   defaults: build, "resnet50 mobilenet_v2 vgg16 distilbert.op13", "1 16"
#   e.g. bench/measure_vs_ort.sh build "mobilenet_v2 distilbert.op13" 1
# Environment: RIDGE_ORT_CACHE (where onnxruntime-node is installed; default ~/.cache/ridge/ort-node),
#              REPEAT (cap on timed repeats per side, default 10), MAX_SECONDS (per side, default 30),
#              THREADS (intra-op threads on both sides, default 2), ROUNDS (ORT and ridge alternate this many
#              times per model and batch; medians are compared, each round's ratio printed; default 1: on a
#              shared VM whose speed drifts, use 3 or more).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
models=${2:-"resnet50 mobilenet_v2 vgg16 distilbert.op13"}
batches=${3:-"1 16"}
ridge=$build/ridge
threads=${THREADS:-2}
seq=128
repeat=${REPEAT:-10}
max_seconds=${MAX_SECONDS:-30}
rounds=${ROUNDS:-1}
fixtures=${RIDGE_SHARED_DIR:-$here/../shared}/fixtures/onnx
me=measure_vs_ort
# shellcheck source=bench/ort_common.sh
. "$here/bench/ort_common.sh"
ort_install || exit 0
ort_version=$(ort_version)

ort_time() {  # FILE BATCH -> median seconds of one forward pass
  NODE_PATH="$cache/node_modules" node - "$1" "$2" "$threads" "$seq" "$repeat" "$max_seconds" <<'EOF'
const ort = require('onnxruntime-node');
const [file, batch, threads, seq, repeat, maxSeconds] = process.argv.slice(2);
(async () => {
  const s = await ort.InferenceSession.create(file, {intraOpNumThreads: +threads, interOpNumThreads: 1,
                                                      executionMode: 'sequential', graphOptimizationLevel: 'all'});
  const feeds = {};
  for (const name of s.inputNames) {
    if (name === 'input_ids') {
      const ids = new BigInt64Array(+batch * +seq).map((_, i) => BigInt((i * 7919) % 30000));
      feeds[name] = new ort.Tensor('int64', ids, [+batch, +seq]);
    } else {
      const n = +batch * 3 * 224 * 224;
      feeds[name] = new ort.Tensor('float32', Float32Array.from({length: n}, (_, i) => Math.sin(i)), [+batch, 3, 224, 224]);
    }
  }
  for (let i = 0; i < 2; ++i) await s.run(feeds);
  const times = [], start = process.hrtime.bigint();
  while (times.length < 5 || (times.length < +repeat && Number(process.hrtime.bigint() - start) / 1e9 < +maxSeconds)) {
    const t = process.hrtime.bigint();
    await s.run(feeds);
    times.push(Number(process.hrtime.bigint() - t) / 1e9);
  }
  times.sort((a, b) => a - b);
  console.log(times[Math.floor(times.length / 2)].toFixed(4));
})().catch(e => { console.error(e.message); process.exit(1); });
EOF
}

echo "onnxruntime-node $ort_version, $threads threads, $rounds round(s); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-16s %5s %12s %12s %12s %10s %10s %s\n" model batch ort_s per_layer_s end_to_end_s ort/e2e fusion_gain \
  "$([ "$rounds" -gt 1 ] && echo "ort/e2e per round")"
for model in $models; do
  src=$fixtures/$model.ext_emptybin.onnx
  if [ ! -f "$src" ]; then echo "measure_vs_ort: no fixture $src (skipped)" >&2; continue; fi
  file=$out/$model.onnx
  fill_weights "$src" "$file"
  for batch in $batches; do
    extra=""; [[ $model == distilbert* ]] && extra="--seq-len $seq"
    : >"$out/rounds.txt"
    for ((round = 1; round <= rounds; ++round)); do  # ORT and ridge alternate: drift of a shared VM cancels
      ort_s=$(ort_time "$file" "$batch") || ort_s=nan
      # shellcheck disable=SC2086
      "$ridge" measure "$file" --batch "$batch" $extra --threads $threads --repeat "$repeat" \
        --max-seconds "$max_seconds" --machine none --end-to-end --format json >"$out/r.json" 2>"$out/r.err" ||
        { cat "$out/r.err" >&2; continue 2; }
      /usr/bin/python3 -c 'import json, sys
j = json.load(open(sys.argv[1])); e = j["end_to_end"]
print(sys.argv[2], j["total_time_s"], e["end_to_end_time_s"])' "$out/r.json" "$ort_s" >>"$out/rounds.txt"
    done
    /usr/bin/python3 - "$out/rounds.txt" "$model" "$batch" <<'EOF'
import math, statistics, sys
rows = [[float(x) for x in line.split()] for line in open(sys.argv[1])]
model, batch = sys.argv[2], sys.argv[3]
ort, per_layer, e2e = (statistics.median(r[i] for r in rows) for i in range(3))
ratio = lambda o, e: o / e if e > 0 and not math.isnan(o) else float("nan")
per_round = " ".join("%.2f" % ratio(r[0], r[2]) for r in rows) if len(rows) > 1 else ""
print("%-16s %5s %12.4f %12.4f %12.4f %9.2fx %9.1f%% %s" % (model, batch, ort, per_layer, e2e, ratio(ort, e2e),
      100 * (per_layer - e2e) / e2e if e2e > 0 else float("nan"), per_round))
EOF
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)  (ort/e2e > 1: ridge's end-to-end program is faster)"
