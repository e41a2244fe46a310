#!/usr/bin/env bash
# ONNX import benchmark (not a test): time and peak RSS of `ridge flops` on resnet50 and the transformer LM,
# from the ONNX fixtures versus the zoo, and on a ~500 MB model with embedded weights generated here (in
# $TMPDIR, deleted afterwards, never committed). Goal: peak RSS about file size + a small constant.
# Usage: bench/onnx_bench.sh [BUILD_DIR (default build)]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
ridge="$build/ridge"
fixtures="${RIDGE_SHARED_DIR:-../shared}/fixtures/onnx"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

measure() {  # label, then the command
  local label=$1
  shift
  /usr/bin/time -f "%e %M" -o "$tmp/time" "$@" >/dev/null
  read -r secs kb <"$tmp/time"
  printf '%-40s time_s %-6s peak_rss_mb %s\n' "$label" "$secs" "$((kb / 1024))"
}

measure "resnet50 (zoo)" "$ridge" flops resnet50
measure "resnet50 (onnx, weightless)" "$ridge" flops "$fixtures/resnet50.ext_emptybin.onnx"
measure "transformer-lm (zoo)" "$ridge" flops transformer-lm
measure "transformer_lm (onnx, weightless)" "$ridge" flops "$fixtures/transformer_lm.ext_emptybin.onnx"

# ~500 MB of embedded weights: an MLP of 8 Gemm layers 4096x4096 (64 MiB each), raw_data in the file.
/usr/bin/python3 - "$tmp/big.onnx" <<'PY'
import sys
import numpy as np
from onnx import TensorProto, helper, numpy_helper
n, layers = 4096, 8
nodes, inits = [], []
prev = "x"
for i in range(layers):
    w = numpy_helper.from_array(np.full((n, n), 0.5 + i, dtype=np.float32), f"fc{i}.weight")
    inits.append(w)
    out = f"h{i}"
    nodes.append(helper.make_node("Gemm", [prev, w.name], [out], name=f"/fc{i}/Gemm", transB=1))
    prev = out
graph = helper.make_graph(nodes, "big", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", n])],
                          [helper.make_tensor_value_info(prev, TensorProto.FLOAT, None)], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
with open(sys.argv[1], "wb") as f:
    f.write(model.SerializeToString())
PY
size_mb=$(( $(stat -c %s "$tmp/big.onnx") / 1024 / 1024 ))
measure "embedded-weight MLP (${size_mb} MB file)" "$ridge" flops "$tmp/big.onnx"
