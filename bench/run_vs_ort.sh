#!/usr/bin/env bash
# `ridge run` against ONNX Runtime (CPU build of the npm package onnxruntime-node) on the same ONNX files, same
# random weights and inputs: do the executor's outputs match a production runtime on whole models? For every
# weightless export (default: tests/data/validation and ../shared/fixtures/onnx), fills the weights (fixed seed;
# running variances in [0.5, 1.5]), draws inputs (symbolic dims: 2 for the first input's first axis, else 16;
# integer inputs in [0, 100)), runs ORT, saves its outputs as .pb and has `ridge run` compare (rtol 1e-3,
# atol 1e-4). Prints one line per model: pass, FAIL, or n/a when ridge did not execute every step or draws random
# masks (named).
# A check, not a test (it needs npm and the Debian python3-onnx/numpy); exits 1 when any model fails.
# Usage: bench/run_vs_ort.sh [BUILD_DIR] [MODEL.onnx ...]
# Environment: RIDGE_ORT_CACHE (where onnxruntime-node is installed; default ~/.cache/ridge/ort-node).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
shift || true
ridge=$build/ridge
[ -x "$ridge" ] || { echo "run_vs_ort: $ridge is not an executable (run scripts/build.sh first)" >&2; exit 1; }
models=("$@")
if [ ${#models[@]} -eq 0 ]; then
  models=("$here"/tests/data/validation/*.ext_emptybin.onnx)
  shared=${RIDGE_SHARED_DIR:-$here/../shared}/fixtures/onnx
  if [ -d "$shared" ]; then models+=("$shared"/*.ext_emptybin.onnx); else echo "run_vs_ort: no $shared (skipped)" >&2; fi
fi
me=run_vs_ort
# shellcheck source=bench/ort_common.sh
. "$here/bench/ort_common.sh"
ort_install || exit 0

prepare() {  # SRC DIR: filled model (fill_weights), inputs as .pb (for ridge) and raw + inputs.json (for ORT)
  fill_weights "$1" "$2/model.onnx" || return 1
  /usr/bin/python3 - "$2" <<'EOF'
import json, sys, numpy as np, onnx
from onnx import numpy_helper
d = sys.argv[1]
m = onnx.load(d + "/model.onnx")
rng = np.random.default_rng(7)
inits = {i.name for i in m.graph.initializer}
manifest = []
for k, inp in enumerate(i for i in m.graph.input if i.name not in inits):
    tt = inp.type.tensor_type
    dims = [d.dim_value if d.dim_value > 0 else (2 if k == 0 and j == 0 else 16) for j, d in enumerate(tt.shape.dim)]
    dtype = np.dtype(onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[tt.elem_type])
    x = rng.integers(0, 100, dims) if dtype.kind in "iu" else rng.uniform(-1, 1, dims)
    x = x.astype(dtype)
    onnx.save_tensor(numpy_helper.from_array(x, inp.name), "%s/input_%d.pb" % (d, k))
    x.tofile("%s/input_%d.raw" % (d, k))
    manifest.append({"name": inp.name, "dims": dims, "type": {"f": "float32", "i": str(dtype), "u": str(dtype)}[dtype.kind]})
json.dump(manifest, open(d + "/inputs.json", "w"))
EOF
}

ort_run() {  # DIR: ORT's outputs as float32 raw + outputs.json
  NODE_PATH="$cache/node_modules" node - "$1" <<'EOF'
const ort = require('onnxruntime-node'), fs = require('fs');
const dir = process.argv[2];
const typed = {float32: Float32Array, int64: BigInt64Array, int32: Int32Array};
(async () => {
  const s = await ort.InferenceSession.create(dir + '/model.onnx', {intraOpNumThreads: 2});
  const feeds = {};
  JSON.parse(fs.readFileSync(dir + '/inputs.json')).forEach((m, k) => {
    const b = fs.readFileSync(`${dir}/input_${k}.raw`);
    feeds[m.name] = new ort.Tensor(m.type, new typed[m.type](b.buffer.slice(b.byteOffset, b.byteOffset + b.length)), m.dims);
  });
  const r = await s.run(feeds), outs = [];
  s.outputNames.forEach((n, k) => {
    const t = r[n];
    const data = t.type === 'float32' ? t.data : Float32Array.from(Array.from(t.data, Number));
    fs.writeFileSync(`${dir}/out_${k}.raw`, Buffer.from(data.buffer, data.byteOffset, data.byteLength));
    outs.push({name: n, dims: t.dims});
  });
  fs.writeFileSync(dir + '/outputs.json', JSON.stringify(outs));
})().catch(e => { console.error(e.message.split('\n')[0]); process.exit(1); });
EOF
}

summarise='import json, sys
j = json.load(open(sys.argv[1]))
missing = [s["name"] + " (" + s["reason"] + ")" for s in j["steps"] if s["status"] == "not executed"]
diff = max((o.get("max_abs_diff") or 0) for o in j["outputs"])
# not comparable: a model with steps ridge did not execute, or with random draws (the mask of a training-mode Dropout)
random = [n for n in j.get("notes", []) if "random mask" in n]
missing += [n.split(":")[0] for n in random]
status = "pass" if j["passed"] else "n/a" if missing else "FAIL"
print("%-34s %-5s %12.3g  %s" % (sys.argv[2], status, diff, "; ".join(missing[:3]) or "-"))
sys.exit(1 if status == "FAIL" else 0)'

echo "onnxruntime-node $(ort_version), ridge run --rtol 1e-3 --atol 1e-4"
printf '%-34s %-5s %12s  %s\n' model match "max |diff|" "not executed"
failed=0
for src in "${models[@]}"; do
  name=$(basename "$src" .ext_emptybin.onnx)
  d=$out/$name
  mkdir -p "$d"
  if ! prepare "$src" "$d" 2>"$d/err" || ! ort_run "$d" 2>"$d/err"; then
    printf '%-34s %-5s %12s  %s\n' "$name" "-" "-" "(ONNX Runtime or the weight fill failed: $(tail -1 "$d/err"))"
    continue
  fi
  /usr/bin/python3 -c 'import json, sys, numpy as np, onnx
from onnx import numpy_helper
d = sys.argv[1]
for k, o in enumerate(json.load(open(d + "/outputs.json"))):
    y = np.fromfile("%s/out_%d.raw" % (d, k), dtype=np.float32).reshape(o["dims"])
    onnx.save_tensor(numpy_helper.from_array(y, o["name"]), "%s/output_%d.pb" % (d, k))' "$d"
  args=()
  for f in "$d"/input_*.pb; do args+=(-i "$f"); done
  for f in "$d"/output_*.pb; do args+=(-o "$f"); done
  "$ridge" run "$d/model.onnx" "${args[@]}" --rtol 1e-3 --atol 1e-4 --threads 2 --format json >"$d/ridge.json" 2>"$d/ridge.err" || true
  if [ ! -s "$d/ridge.json" ]; then
    printf '%-34s %-5s %12s  %s\n' "$name" "FAIL" "-" "(ridge: $(tail -1 "$d/ridge.err"))"
    failed=$((failed + 1))
    continue
  fi
  /usr/bin/python3 -c "$summarise" "$d/ridge.json" "$name" || failed=$((failed + 1))
done
echo "run_vs_ort: ${#models[@]} models, $failed not matching ONNX Runtime"
[ "$failed" -eq 0 ]
